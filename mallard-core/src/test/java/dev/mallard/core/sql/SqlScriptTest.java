// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SqlScriptTest {
    @Test
    void splitsAtTopLevelSemicolonsOnly() {
        List<SqlScript.Statement> statements = SqlScript.split(
                "CREATE TABLE a(x VARCHAR DEFAULT 'a;b');\n-- a comment; with a semicolon\nSELECT \"odd;name\" FROM a;\n/* c; */ SELECT $$x;y$$");
        assertThat(statements).extracting(SqlScript.Statement::sql).containsExactly(
                "CREATE TABLE a(x VARCHAR DEFAULT 'a;b')",
                "-- a comment; with a semicolon\nSELECT \"odd;name\" FROM a",
                "/* c; */ SELECT $$x;y$$");
    }

    @Test
    void eachStatementKnowsTheLineItStartsOn() {
        List<SqlScript.Statement> statements = SqlScript.split("SELECT 1;\n\n  -- note\n  SELECT 2;\nSELECT 3");
        assertThat(statements).extracting(SqlScript.Statement::line).containsExactly(1, 4, 5);
    }

    @Test
    void keywordSkipsCommentsAndIgnoresCase() {
        assertThat(SqlScript.split("-- x\n  create table t(a int)").getFirst().words(2)).isEqualTo("CREATE TABLE");
        assertThat(SqlScript.split("install httpfs").getFirst().keyword()).isEqualTo("INSTALL");
    }

    @Test
    void blankAndCommentOnlyPartsAreNotStatements() {
        assertThat(SqlScript.split(" ; -- only a comment\n ;")).isEmpty();
    }

    @Test
    void doubledQuotesStayInsideTheString() {
        assertThat(SqlScript.split("SELECT 'it''s; fine'; SELECT 2")).hasSize(2);
    }
}
