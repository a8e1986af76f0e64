// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.engine.Engine;
import dev.mallard.flow.config.PipelineConfig.Substitution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqlCommandSinkTest {
    @TempDir
    Path dir;

    @Test
    void eachBatchWritesItsOwnParquetFileNamedByAFreshUuid() throws Exception {
        try (Engine engine = Engine.inMemory(); Statement statement = engine.connection().createStatement()) {
            SqlCommandSink sink = new SqlCommandSink("COPY sqlflow_sink_batch TO '" + dir + "/$sqlflow_uuid.parquet' (FORMAT parquet)",
                    List.of(new Substitution("$sqlflow_uuid", "uuid4")));
            for (int batch = 1; batch <= 2; batch++) {
                statement.execute("CREATE OR REPLACE TEMP TABLE result AS SELECT " + batch + " AS batch, range AS i FROM range(3)");
                sink.write(new ResultTable(engine.connection(), "result", 3));
                sink.flush();
            }
            List<Path> files;
            try (Stream<Path> listing = Files.list(dir)) {
                files = listing.toList();
            }
            assertThat(files).hasSize(2).allSatisfy(file ->
                    assertThat(file.getFileName().toString()).matches("[0-9a-f-]{36}\\.parquet"));
            try (ResultSet rows = statement.executeQuery("SELECT batch, count(*) FROM read_parquet('" + dir + "/*.parquet') GROUP BY 1 ORDER BY 1")) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getLong(2)).isEqualTo(3);
                assertThat(rows.next()).isTrue();
                assertThat(rows.getInt(1)).isEqualTo(2);
            }
        }
    }
}
