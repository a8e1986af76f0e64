// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IcebergSettingsTest {
    @TempDir
    Path dir;

    private static JsonNode block(String json) throws Exception {
        return new ObjectMapper().readTree(json);
    }

    @Test
    void aSqlflowBlockWithoutACatalogFindsItInPyicebergYamlUnderPyicebergHome() throws Exception {
        Files.writeString(dir.resolve(".pyiceberg.yaml"), """
                catalog:
                  sqlflow_test:
                    uri: sqlite:////tmp/sqlflow/warehouse/catalog.db
                    warehouse: file:////tmp/sqlflow/warehouse
                """);
        IcebergSettings settings = IcebergSettings.of(block("{\"catalog_name\": \"sqlflow_test\", \"table_name\": \"default.city_events\"}"),
                Map.of("PYICEBERG_HOME", dir.toString()));
        assertThat(settings.jdbcUrl()).isEqualTo("jdbc:sqlite:/tmp/sqlflow/warehouse/catalog.db");
        assertThat(settings.warehouse()).isEqualTo(Path.of("/tmp/sqlflow/warehouse"));
        assertThat(settings.namespace()).containsExactly("default");
        assertThat(settings.table()).isEqualTo("city_events");
    }

    @Test
    void pyicebergsCatalogVariablesGoBeforeTheFile() throws Exception {
        Files.writeString(dir.resolve(".pyiceberg.yaml"), "catalog: {lake: {uri: 'sqlite:////a.db', warehouse: /a}}\n");
        IcebergSettings settings = IcebergSettings.of(block("{\"catalog_name\": \"lake\", \"table_name\": \"db.t\"}"),
                Map.of("PYICEBERG_HOME", dir.toString(), "PYICEBERG_CATALOG__LAKE__URI", "jdbc:sqlite:/b.db"));
        assertThat(settings.jdbcUrl()).isEqualTo("jdbc:sqlite:/b.db");
        assertThat(settings.warehouse()).isEqualTo(Path.of("/a"));
    }

    @Test
    void aSqlalchemyPostgresUrlBecomesAJdbcUrlWithItsCredentialsApartAndThePasswordNeverShown() throws Exception {
        IcebergSettings settings = IcebergSettings.of(block("""
                {"catalog_name": "c", "table_name": "a.b.t",
                 "catalog": {"uri": "postgresql+psycopg2://etl:s3cret@db.internal:5433/lake?sslmode=require", "warehouse": "/lake"}}
                """), Map.of());
        assertThat(settings.jdbcUrl()).isEqualTo("jdbc:postgresql://db.internal:5433/lake?sslmode=require");
        assertThat(settings.user()).contains("etl");
        assertThat(settings.password()).contains("s3cret");
        assertThat(settings.namespace()).containsExactly("a", "b");
        assertThat(settings.toString()).doesNotContain("s3cret");
        assertThat(IcebergSettings.redacted("postgresql://etl:s3cret@h/db")).isEqualTo("postgresql://etl:***@h/db");
    }

    @Test
    void aCatalogDefinedNowhereIsACodedErrorNamingCatalogNameAndWhereItWasLookedFor() {
        assertThatThrownBy(() -> IcebergSettings.of(block("{\"catalog_name\": \"missing\", \"table_name\": \"db.t\"}"),
                Map.of("PYICEBERG_HOME", dir.toString())))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ICEBERG_CATALOG_INVALID))
                .hasMessageContaining("catalog_name")
                .hasMessageContaining(dir.resolve(".pyiceberg.yaml").toString())
                .hasMessageContaining("PYICEBERG_CATALOG__MISSING__URI");
    }

    @Test
    void theFaultsOfACatalogBlockAreReportedPerKeyWithoutReachingTheCatalog() throws Exception {
        List<IcebergSettings.Problem> problems = IcebergSettings.problems(block("""
                {"catalog_name": "c", "table_name": "city_events",
                 "catalog": {"uri": "mysql://db/lake", "warehouse": "s3://bucket/lake"}}
                """));
        assertThat(problems).extracting(IcebergSettings.Problem::key, IcebergSettings.Problem::code).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple("table_name", ErrorCode.USER_CONFIG_INVALID),
                org.assertj.core.groups.Tuple.tuple("catalog.uri", ErrorCode.USER_ICEBERG_CATALOG_INVALID),
                org.assertj.core.groups.Tuple.tuple("catalog.warehouse", ErrorCode.USER_CONFIG_UNSUPPORTED));
        assertThat(IcebergSettings.problems(block("{\"catalog_name\": \"c\", \"table_name\": \"default.t\"}"))).isEmpty();
        assertThat(Optional.of(IcebergSettings.problems(block(
                "{\"catalog_name\": \"c\", \"table_name\": \"d.t\", \"catalog\": {\"uri\": \"sqlite:////x.db\", \"warehouse\": \"relative/dir\"}}"))))
                .hasValueSatisfying(list -> assertThat(list).singleElement().satisfies(p -> assertThat(p.message()).contains("relative")));
    }
}
