// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import org.junit.jupiter.api.Test;

class PostgresDsnTest {
    private static PostgresDsn parse(String dsn) {
        return PostgresDsn.parse(dsn, "pipeline.sink.postgres.dsn");
    }

    @Test
    void aLibpqUriBecomesAJdbcUrlWithTheCredentialsInProperties() {
        PostgresDsn dsn = parse("postgres://app:s%40cret@db.example.com:6543/metrics?sslmode=require&application_name=dash");
        assertThat(dsn.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example.com:6543/metrics");
        assertThat(dsn.properties()).containsEntry("user", "app").containsEntry("password", "s@cret")
                .containsEntry("sslmode", "require").containsEntry("ApplicationName", "dash");
    }

    @Test
    void thePostgresqlSchemeAndAUriWithoutPortOrCredentialsAreAccepted() {
        PostgresDsn dsn = parse("postgresql://localhost/test");
        assertThat(dsn.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost/test");
        assertThat(dsn.properties()).doesNotContainKey("password");
    }

    @Test
    void keyValueFormTakesQuotedValuesWithSpacesAndEscapes() {
        PostgresDsn dsn = parse("host=10.0.0.5 port=5433 dbname=analytics user=etl password='it\\'s a b' sslmode=verify-full connect_timeout=3");
        assertThat(dsn.jdbcUrl()).isEqualTo("jdbc:postgresql://10.0.0.5:5433/analytics");
        assertThat(dsn.properties()).containsEntry("user", "etl").containsEntry("sslmode", "verify-full").containsEntry("connectTimeout", "3");
        assertThat(dsn.properties().getProperty("password")).isEqualTo("it's a b");
    }

    @Test
    void aJdbcUrlIsKeptAsWritten() {
        assertThat(parse("jdbc:postgresql://h:5432/db?user=u").jdbcUrl()).isEqualTo("jdbc:postgresql://h:5432/db?user=u");
    }

    @Test
    void severalHostsEachGetThePort() {
        assertThat(parse("host=a,b port=5432 dbname=d").jdbcUrl()).isEqualTo("jdbc:postgresql://a:5432,b:5432/d");
    }

    @Test
    void thePasswordAppearsNeitherInTheDescriptionNorInToString() {
        PostgresDsn dsn = parse("postgres://app:hunter2@db:5432/metrics");
        assertThat(dsn.description()).isEqualTo("db:5432/metrics user=app");
        assertThat(dsn.toString()).doesNotContain("hunter2");
    }

    @Test
    void textOfNoKnownFormIsRefusedWithoutRepeatingIt() {
        assertThatThrownBy(() -> parse("mysql://root:hunter2@db/x"))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("pipeline.sink.postgres.dsn")
                .hasMessageNotContaining("hunter2");
    }
}
