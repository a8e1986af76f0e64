package dev.mallard.server.flight;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PreparedQueryTest {
    @Test
    void aTextWithTrailingSemicolonsIsOneStatement() {
        assertThat(PreparedQuery.isOneStatement("SELECT 1")).isTrue();
        assertThat(PreparedQuery.isOneStatement("SELECT 1;")).isTrue();
        assertThat(PreparedQuery.isOneStatement("SELECT 1 ;  ;\n")).isTrue();
    }

    @Test
    void aTextWithASemicolonInsideIsNotOneStatement() {
        assertThat(PreparedQuery.isOneStatement("CREATE TABLE t (a INT); SELECT * FROM t")).isFalse();
        // Inside a literal it is still counted: the text is only not reused, never run differently.
        assertThat(PreparedQuery.isOneStatement("SELECT 'a;b'")).isFalse();
    }
}
