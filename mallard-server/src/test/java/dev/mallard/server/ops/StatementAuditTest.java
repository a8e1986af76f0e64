// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import org.junit.jupiter.api.Test;

class StatementAuditTest {
    @Test
    void secretLiteralsAndCredentialsNeverReachTheAuditLine() {
        String line = StatementAudit.redacted("CREATE SECRET s3_main (TYPE s3, KEY_ID 'AKIAEXAMPLE', SECRET 'hunter''2', REGION 'eu-west-1');\n"
                + "ATTACH 'postgres://ada:pa55word@db/x' AS pg; SELECT 'password=topsecret'");
        assertThat(line).doesNotContain("AKIAEXAMPLE").doesNotContain("hunter").doesNotContain("pa55word").doesNotContain("topsecret")
                .contains("REGION 'eu-west-1'").contains("KEY_ID '***'").doesNotContain("\n");
    }

    @Test
    void anOutcomeNamesHowTheStatementEnded() {
        assertThat(StatementAudit.outcome(null)).isEqualTo("ok");
        assertThat(StatementAudit.outcome(new MallardException(ErrorCode.USER_SQL_TIMEOUT, "late"))).isEqualTo("timeout");
        assertThat(StatementAudit.outcome(new MallardException(ErrorCode.USER_SQL_CANCELLED, "stop"))).isEqualTo("cancelled");
        assertThat(StatementAudit.outcome(new MallardException(ErrorCode.USER_ACCESS_DENIED, "no"))).isEqualTo("refused");
        assertThat(StatementAudit.outcome(new MallardException(ErrorCode.USER_SQL_INVALID, "bad"))).isEqualTo("error");
    }
}
