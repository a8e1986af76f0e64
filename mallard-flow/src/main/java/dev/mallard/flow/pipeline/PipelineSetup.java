package dev.mallard.flow.pipeline;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.flow.config.PipelineConfig;
import java.sql.SQLException;
import java.sql.Statement;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs a configuration's {@code commands}, then creates its {@code tables}, before the first batch. */
public final class PipelineSetup {
    private static final Logger LOG = LoggerFactory.getLogger(PipelineSetup.class);

    private PipelineSetup() {}

    public static void run(PipelineConfig config, DuckDBConnection connection) {
        for (PipelineConfig.Command command : config.commands()) {
            LOG.info("running command name={}", command.name());
            execute(connection, command.sql(), "command '" + command.name() + "' (" + command.path() + ")");
        }
        for (PipelineConfig.TableSql table : config.tables()) {
            LOG.info("creating table name={}", table.name());
            execute(connection, table.sql(), "table '" + table.name() + "' (" + table.path() + ")");
        }
    }

    private static void execute(DuckDBConnection connection, String sql, String what) {
        try (Statement statement = connection.createStatement()) {
            for (SqlScript.Statement each : SqlScript.split(sql)) {
                try {
                    statement.execute(each.sql());
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, what + ", statement on line " + each.line()
                            + " failed: " + e.getMessage());
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot run " + what + ": " + e.getMessage(), e);
        }
    }
}
