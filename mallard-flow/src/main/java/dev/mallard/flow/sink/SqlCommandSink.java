// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.flow.config.PipelineConfig.Substitution;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;

/**
 * Runs the sink's SQL once per batch with the batch visible as {@code sqlflow_sink_batch}, after replacing
 * each substitution variable, e.g. {@code COPY sqlflow_sink_batch TO '/out/$sqlflow_uuid.parquet'} writes
 * one file per batch.
 */
public final class SqlCommandSink implements Sink {
    public static final String BATCH_RELATION = "sqlflow_sink_batch";

    private final String sql;
    private final List<Substitution> substitutions;

    public SqlCommandSink(String sql, List<Substitution> substitutions) {
        this.sql = requireNonNull(sql, "sql is null");
        this.substitutions = List.copyOf(substitutions);
        for (Substitution substitution : substitutions) {
            if (!"uuid4".equals(substitution.type())) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "sqlcommand substitution " + substitution.var()
                        + " has type " + substitution.type() + "; the only type is uuid4");
            }
        }
    }

    @Override
    public void write(ResultTable batch) {
        String text = sql;
        for (Substitution substitution : substitutions) {
            text = text.replace(substitution.var(), UUID.randomUUID().toString());
        }
        try (Statement statement = batch.connection().createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP VIEW " + BATCH_RELATION + " AS SELECT * FROM " + batch.name());
            for (SqlScript.Statement each : SqlScript.split(text)) {
                statement.execute(each.sql());
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "sqlcommand sink: " + e.getMessage()
                    + " (the batch is the relation " + BATCH_RELATION + ")", e);
        }
    }

    @Override
    public void flush() {}
}
