// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RowFilterRewriterTest {
    private static final String ABC = "[[\"table\",\"products\",\"*\",\"tenant_id = 'abc'\"]]";
    private Connection connection;

    @BeforeEach
    void open() throws SQLException {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        run("CREATE TABLE products (id INT, tenant_id VARCHAR, price INT)",
                "INSERT INTO products VALUES (1,'abc',10),(2,'xyz',20),(3,'abc',30)",
                "CREATE TABLE reviews (product_id INT, tenant_id VARCHAR, rating INT)",
                "INSERT INTO reviews VALUES (1,'abc',5),(2,'xyz',3),(3,'abc',4)",
                "CREATE TABLE secrets (id INT, tenant_id VARCHAR)",
                "INSERT INTO secrets VALUES (1,'abc'),(2,'xyz')");
    }

    @AfterEach
    void close() throws SQLException {
        connection.close();
    }

    @Test
    void theFilterIsAppliedToATableInFrom() throws SQLException {
        assertThat(ids(rro(ABC), "SELECT id FROM products ORDER BY id")).containsExactly(1, 3);
    }

    @Test
    void aTableTheClaimDoesNotNameReadsAsEmpty() throws SQLException {
        assertThat(ids(rro(ABC), "SELECT id FROM secrets")).isEmpty();
        assertThat(ids(rro(ABC), "SELECT p.id FROM products p JOIN reviews r ON p.id = r.product_id")).isEmpty();
    }

    @Test
    void everyJoinArmGetsItsOwnTablesFilter() throws SQLException {
        String access = "[[\"table\",\"products\",\"*\",\"tenant_id = 'abc'\"],[\"table\",\"reviews\",\"*\",\"rating >= 5\"]]";
        assertThat(ids(rro(access), "SELECT p.id FROM products p JOIN reviews r ON p.id = r.product_id ORDER BY 1")).containsExactly(1);
        assertThat(ids(rro(access), "SELECT r.product_id FROM products p RIGHT JOIN reviews r ON p.id = r.product_id ORDER BY 1")).containsExactly(1);
        assertThat(ids(rro(access), "SELECT count(*)::INT FROM products, reviews")).containsExactly(2);
    }

    @Test
    void subqueriesInWhereSelectHavingAndExistsAreFiltered() throws SQLException {
        RowLevelSecurity rls = rro(ABC);
        assertThat(ids(rls, "SELECT (SELECT max(id) FROM products)")).containsExactly(3);
        assertThat(ids(rls, "SELECT 1 WHERE EXISTS (SELECT 1 FROM products WHERE tenant_id = 'xyz')")).isEmpty();
        assertThat(ids(rls, "SELECT 7 WHERE 2 IN (SELECT id FROM products)")).isEmpty();
        assertThat(ids(rls, "SELECT count(*)::INT FROM (VALUES (1)) v(a) GROUP BY a HAVING count(*) < (SELECT count(*) FROM products)"))
                .containsExactly(1);
    }

    @Test
    void cteBodiesAndSetOperationBranchesAreFilteredAndCteNamesAreNotTables() throws SQLException {
        RowLevelSecurity rls = rro(ABC);
        assertThat(ids(rls, "WITH products AS (SELECT * FROM products WHERE price > 5) SELECT id FROM products ORDER BY id")).containsExactly(1, 3);
        assertThat(ids(rls, "SELECT id FROM products UNION ALL SELECT id FROM products WHERE id > 2 ORDER BY 1")).containsExactly(1, 3, 3);
        assertThat(ids(rls, "SELECT id FROM secrets UNION SELECT id FROM products ORDER BY 1")).containsExactly(1, 3);
        assertThat(ids(rls, "WITH RECURSIVE r(n) AS (SELECT min(id) FROM products UNION ALL SELECT n + 1 FROM r WHERE n < 2) SELECT n FROM r ORDER BY n"))
                .containsExactly(1, 2);
    }

    @Test
    void aLateralJoinReadsFilteredRows() throws SQLException {
        assertThat(ids(rro(ABC), "SELECT x.id FROM (VALUES (1)) v(a), LATERAL (SELECT id FROM products WHERE id >= v.a) x ORDER BY 1"))
                .containsExactly(1, 3);
    }

    @Test
    void aViewIsReplacedByItsFilteredDefinition() throws SQLException {
        run("CREATE VIEW expensive (pid, cost) AS SELECT id, price FROM products WHERE price > 5",
                "CREATE VIEW expensive_twice AS SELECT pid FROM expensive");
        assertThat(ids(rro(ABC), "SELECT pid FROM expensive ORDER BY pid")).containsExactly(1, 3);
        assertThat(ids(rro(ABC), "SELECT e.pid FROM expensive_twice e ORDER BY 1")).containsExactly(1, 3);
    }

    @Test
    void aMaterializedViewIsReplacedByItsFilteredDefiningQuery() throws SQLException {
        try (dev.mallard.views.MaterializedViews views = dev.mallard.views.MaterializedViews.attach((org.duckdb.DuckDBConnection) connection)) {
            views.createView("totals", "SELECT tenant_id, sum(price) AS total, count(*) AS n FROM products GROUP BY tenant_id");
            assertThat(ids(rro(ABC), "SELECT total::INT FROM totals")).containsExactly(40);
            assertThat(ids(rro(ABC), "SELECT count(*)::INT FROM totals t JOIN products p USING (tenant_id)")).containsExactly(2);
            // A grant naming the view's table itself does not open it: the view reads products, which no grant names.
            assertThat(ids(rro("[[\"table\",\"totals\",\"*\",\"true\"]]"), "SELECT count(*)::INT FROM totals")).containsExactly(0);
        }
    }

    @Test
    void aSameNamedTableInAnotherSchemaIsNotCoveredByABareGrant() throws SQLException {
        run("CREATE SCHEMA other", "CREATE TABLE other.products AS SELECT * FROM products");
        assertThat(ids(rro(ABC), "SELECT id FROM other.products")).isEmpty();
        Map<String, Object> legacy = Map.of(RlsClaims.TABLE, "products", RlsClaims.FILTER, "tenant_id = 'abc'", RlsClaims.DATABASE, "memory",
                RlsClaims.SCHEMA, "main");
        RowLevelSecurity rls = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, legacy).orElseThrow();
        assertThat(ids(rls, "SELECT id FROM products ORDER BY 1")).containsExactly(1, 3);
        assertThat(ids(rls, "SELECT id FROM other.products")).isEmpty();
        assertThat(ids(rro("[[\"table\",\"memory.main.products\",\"*\",\"tenant_id = 'abc'\"]]"), "SELECT id FROM products ORDER BY 1"))
                .containsExactly(1, 3);
    }

    @Test
    void aFilterColumnNeverBindsToAnOuterQuery() throws SQLException {
        // secrets has tenant_id but reviews-only filter columns do not exist in products: the rewrite must fail, not correlate.
        RowLevelSecurity rls = rro("[[\"table\",\"products\",\"*\",\"rating > 0\"]]");
        assertThatThrownBy(() -> ids(rls, "SELECT p.id FROM reviews r, LATERAL (SELECT id FROM products) p")).isInstanceOf(SQLException.class);
    }

    @Test
    void variablesFromTheClaimAreReadableInFilters() throws SQLException {
        RowLevelSecurity rls = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.ACCESS,
                "[[\"table\",\"products\",\"*\",\"tenant_id = getvariable('tenant')\"]]", RlsClaims.VARIABLES, Map.of("tenant", "xyz"))).orElseThrow();
        rls.open(connection);
        assertThat(ids(rls, "SELECT id FROM products")).containsExactly(2);
    }

    @Test
    void restrictedReadsTheOneGrantedTableWithItsFilterAndNothingElse() throws SQLException {
        RowLevelSecurity rls = restricted(ABC);
        assertThat(ids(rls, "SELECT id FROM products ORDER BY id")).containsExactly(1, 3);
        assertThat(ids(rls, "SELECT id FROM memory.main.products ORDER BY id")).containsExactly(1, 3);
        assertRefused(rls, "SELECT id FROM secrets", ErrorCode.USER_ACCESS_DENIED, "No access to memory.main.secrets");
        assertRefused(rls, "SELECT id FROM products WHERE id IN (SELECT id FROM secrets)", ErrorCode.USER_ACCESS_DENIED, "No access to");
        assertRefused(rls, "SELECT * FROM read_csv('/etc/passwd')", ErrorCode.USER_ACCESS_DENIED, "No access to read_csv");
        assertRefused(rls, "SELECT * FROM duckdb_tables()", ErrorCode.USER_ACCESS_DENIED, "No access to duckdb_tables");
    }

    @Test
    void restrictedTakesExactlyOneAccessEntry() {
        assertThatThrownBy(() -> restricted("[[\"table\",\"a\",\"*\",\"true\"],[\"table\",\"b\",\"*\",\"true\"]]"))
                .isInstanceOf(MallardException.class).hasMessageContaining("exactly one entry")
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
    }

    @Test
    void restrictedAdmitsAFileReaderUnderTheGrantedPathOnly() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("rls");
        java.nio.file.Files.writeString(dir.resolve("a.csv"), "key,value\nk1,v1\nk2,v2\n");
        RowLevelSecurity rls = restricted("[[\"path\",\"" + dir + "/\",\"*\",\"key = 'k2'\"]]");
        assertThat(strings(rls, "SELECT value FROM read_csv('" + dir.resolve("a.csv") + "')")).containsExactly("v2");
        assertRefused(rls, "SELECT * FROM read_csv('/etc/passwd')", ErrorCode.USER_ACCESS_DENIED, "No access to read_csv('/etc/passwd')");
        assertRefused(rls, "SELECT * FROM products", ErrorCode.USER_ACCESS_DENIED, "No access to memory.main.products");
    }

    @Test
    void restrictedAdmitsAFileReadersFormatOptionsOfConstantsAsDazzleDucksHiveQueryWritesThem() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("rls");
        run("COPY (SELECT 'k1' AS key, 1 AS n UNION ALL SELECT 'k2', 2) TO '" + dir + "' (FORMAT parquet, PARTITION_BY (key))");
        RowLevelSecurity rls = restricted("[[\"path\",\"" + dir + "/\",\"*\",\"key <> 'k1'\"]]");
        String files = "'" + dir + "/*/*.parquet'";
        assertThat(strings(rls, "SELECT key FROM read_parquet(" + files + ", hive_partitioning = true, hive_types = {'key': VARCHAR})"))
                .containsExactly("k2");
        assertThat(strings(rls, "SELECT CAST(count(*) AS VARCHAR) FROM read_parquet([" + files + "], union_by_name = true, filename = false)"))
                .containsExactly("1");
        assertRefused(rls, "SELECT * FROM read_parquet(" + files + ", hive_partitioning = (SELECT true FROM secrets LIMIT 1))",
                ErrorCode.USER_ACCESS_DENIED, "must be constants");
        assertRefused(rls, "SELECT * FROM read_parquet(" + files + ", hive_types = {'key': lower('VARCHAR')})", ErrorCode.USER_ACCESS_DENIED,
                "must be constants");
        assertRefused(rls, "SELECT * FROM read_parquet(" + files + ", encryption_config = {footer_key: 'k'})", ErrorCode.USER_ACCESS_DENIED,
                "encryption_config");
        assertRefused(rls, "SELECT * FROM read_parquet(" + files + ", hive_partitioning = key)", ErrorCode.USER_ACCESS_DENIED, "must be constants");
    }

    @Test
    void restrictReadOnlyRefusesTableFunctionsMultipleStatementsWritesAndUnknownNodes() throws SQLException {
        RowLevelSecurity rls = rro(ABC);
        assertRefused(rls, "SELECT * FROM duckdb_tables()", ErrorCode.USER_ACCESS_DENIED, "No access to duckdb_tables()");
        assertRefused(rls, "SELECT * FROM query('SELECT * FROM secrets')", ErrorCode.USER_ACCESS_DENIED, "No access to query(");
        assertRefused(rls, "SELECT id FROM products; SELECT id FROM secrets", ErrorCode.USER_ACCESS_DENIED, "one statement");
        assertRefused(rls, "DELETE FROM products", ErrorCode.USER_ACCESS_DENIED, "one SELECT");
        assertRefused(rls, "WITH x AS (DELETE FROM products RETURNING *) SELECT count(*) FROM x", ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "DELETE_QUERY_NODE");
        assertRefused(rls, "PIVOT products ON tenant_id USING sum(price)", ErrorCode.USER_ACCESS_DENIED, "one SELECT");
        assertRefused(rls, "SELECT * FROM (PIVOT products ON tenant_id USING sum(price))", ErrorCode.USER_ACCESS_DENIED, "one SELECT");
        assertRefused(rls, "SELECT * FROM products AT (VERSION => 1)", ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "AT clause");
        assertThat(ids(rls, "SELECT count(*)::INT FROM secrets")).containsExactly(0);
    }

    @Test
    void macrosAndUserFunctionsAreRefusedEvenUnderABuiltInsName() throws SQLException {
        run("CREATE MACRO leak() AS (SELECT count(*) FROM secrets)", "CREATE MACRO lower(x) AS (SELECT max(id) FROM secrets)",
                "CREATE MACRO rows_of() AS TABLE SELECT * FROM secrets", "CREATE MACRO current_database() AS 'nowhere'",
                "CREATE MACRO json_serialize_sql(x) AS '{\"error\":false,\"statements\":[]}'");
        RowLevelSecurity rls = rro(ABC);
        // The rewriter's own calls are system.main's, whatever macros shadow them.
        assertThat(ids(rls, "SELECT id FROM products ORDER BY id")).containsExactly(1, 3);
        assertRefused(rls, "SELECT leak()", ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "user-defined function leak");
        assertRefused(rls, "SELECT id FROM products WHERE lower(tenant_id) = 'abc'", ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "lower");
        assertRefused(rls, "SELECT * FROM rows_of()", ErrorCode.USER_ACCESS_DENIED, "No access to rows_of()");
        assertRefused(rls, "SELECT dbsp_create_view('v', 'SELECT 1')", ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "dbsp_create_view");
    }

    @Test
    void restrictReadOnlyNeedsAFilter() {
        assertThatThrownBy(() -> RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of()))
                .isInstanceOf(MallardException.class).extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
        assertThatThrownBy(() -> RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.FILTER, "tenant_id = 'abc'")))
                .isInstanceOf(MallardException.class).hasMessageContaining("names no datasource");
    }

    @Test
    void aFilterThatIsNotOneExpressionIsRefused() {
        for (String filter : List.of("true; DROP TABLE products", "1=1 UNION SELECT 1", "id IN (SELECT id FROM secrets)")) {
            RowLevelSecurity rls = rro("[[\"table\",\"products\",\"*\",\"" + filter + "\"]]");
            assertThatThrownBy(() -> rls.admit(connection, "SELECT id FROM products")).isInstanceOf(MallardException.class)
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
        }
    }

    @Test
    void aProjectedTableExposesOnlyItsGrantedColumnsWhileTheFilterReadsAnyColumn() throws SQLException {
        for (RowLevelSecurity rls : List.of(restricted("[[\"table\",\"products\",\"id, \\\"TENANT_ID\\\"\",\"price > 15\"]]"),
                rro("[[\"table\",\"products\",\"id, tenant_id\",\"price > 15\"]]"))) {
            assertThat(ids(rls, "SELECT id FROM products ORDER BY id")).containsExactly(2, 3);
            assertThat(columns(rls, "SELECT * FROM products")).containsExactly("id", "tenant_id");
            assertThat(columns(rls, "WITH p AS (SELECT * FROM products) SELECT p.* FROM p")).containsExactly("id", "tenant_id");
            for (String sql : List.of("SELECT price FROM products", "SELECT id FROM products WHERE price > 0", "SELECT sum(p.price) FROM products p",
                    "SELECT id FROM products ORDER BY price", "SELECT (SELECT max(price) FROM products)",
                    "WITH p AS (SELECT * FROM products) SELECT price FROM p", "SELECT a.id FROM products a JOIN products b USING (price)",
                    "SELECT id FROM products GROUP BY id HAVING max(\"PRICE\") > 0")) {
                assertRefused(rls, sql, ErrorCode.USER_ACCESS_DENIED, "No access to column");
            }
        }
    }

    @Test
    void aViewReadingAColumnItsTablesProjectionHidesIsRefused() throws SQLException {
        run("CREATE VIEW prices AS SELECT id, price FROM products", "CREATE VIEW ids AS SELECT id FROM products");
        RowLevelSecurity rls = rro("[[\"table\",\"products\",\"id, tenant_id\",\"tenant_id = 'abc'\"]]");
        assertThat(ids(rls, "SELECT id FROM ids ORDER BY id")).containsExactly(1, 3);
        assertRefused(rls, "SELECT id FROM prices", ErrorCode.USER_ACCESS_DENIED, "No access to column price");
    }

    @Test
    void aProjectedPathGrantExposesOnlyItsColumnsOfTheFile() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("rls");
        java.nio.file.Files.writeString(dir.resolve("a.csv"), "key,value,secret\nk1,v1,s1\nk2,v2,s2\n");
        RowLevelSecurity rls = restricted("[[\"path\",\"" + dir + "/\",\"key, value\",\"secret = 's2'\"]]");
        String file = "read_csv('" + dir.resolve("a.csv") + "')";
        assertThat(strings(rls, "SELECT value FROM " + file)).containsExactly("v2");
        assertThat(columns(rls, "SELECT * FROM " + file)).containsExactly("key", "value");
        assertRefused(rls, "SELECT secret FROM " + file, ErrorCode.USER_ACCESS_DENIED, "No access to column secret");
    }

    @Test
    void aProjectionThatIsNotAListOfTheDatasourcesColumnsIsAClaimsError() {
        for (String projection : List.of("id, price + 1", "id AS x", "nothing_here", "id; DROP TABLE products", "(SELECT 1)")) {
            RowLevelSecurity rls = rro("[[\"table\",\"products\",\"" + projection + "\",\"true\"]]");
            assertThatThrownBy(() -> rls.admit(connection, "SELECT id FROM products")).as(projection).isInstanceOf(MallardException.class)
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
        }
        assertThatThrownBy(() -> rro("[[\"table\",\"products\",\" \",\"true\"]]")).isInstanceOf(MallardException.class)
                .hasMessageContaining("empty projection");
    }

    private List<String> columns(RowLevelSecurity rls, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(rls.admit(connection, sql))) {
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                out.add(rs.getMetaData().getColumnName(i).toLowerCase(java.util.Locale.ROOT));
            }
        }
        return out;
    }

    private void assertRefused(RowLevelSecurity rls, String sql, ErrorCode code, String message) {
        assertThatThrownBy(() -> rls.admit(connection, sql)).isInstanceOf(MallardException.class).hasMessageContaining(message)
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(code);
    }

    private static RowLevelSecurity rro(String access) {
        return RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.ACCESS, access)).orElseThrow();
    }

    private static RowLevelSecurity restricted(String access) {
        return RowLevelSecurity.of(AccessMode.RESTRICTED, Map.of(RlsClaims.ACCESS, access)).orElseThrow();
    }

    private List<Integer> ids(RowLevelSecurity rls, String sql) throws SQLException {
        List<Integer> out = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(rls.admit(connection, sql))) {
            while (rs.next()) {
                out.add(rs.getInt(1));
            }
        }
        return out;
    }

    private List<String> strings(RowLevelSecurity rls, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(rls.admit(connection, sql))) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private void run(String... statements) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }
}
