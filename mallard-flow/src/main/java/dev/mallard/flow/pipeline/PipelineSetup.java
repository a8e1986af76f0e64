// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a configuration's {@code commands}, then creates its {@code tables}, before the first batch. Statements go
 * through the materialized views' front door once the database has views: from the first view statement
 * ({@code CREATE MATERIALIZED VIEW}, a {@code dbsp_*} call), or from the start when the state file already holds
 * views, so a write in a command leaves them current too.
 */
public final class PipelineSetup {
    private static final Logger LOG = LoggerFactory.getLogger(PipelineSetup.class);

    private final DuckDBConnection connection;
    private MaterializedViews views;
    private ViewSql front;

    private PipelineSetup(DuckDBConnection connection) {
        this.connection = connection;
    }

    /**
     * Runs the setup and returns the database's materialized views when it has any: the caller syncs them after
     * every batch and closes them.
     */
    public static Optional<MaterializedViews> run(PipelineConfig config, DuckDBConnection connection) {
        PipelineSetup setup = new PipelineSetup(connection);
        try {
            if (MaterializedViews.catalogExists(connection)) {
                setup.attachViews();
            }
            for (PipelineConfig.Command command : config.commands()) {
                LOG.info("running command name={}", command.name());
                setup.execute(command.sql(), "command '" + command.name() + "' (" + command.path() + ")");
            }
            for (PipelineConfig.TableSql table : config.tables()) {
                LOG.info("creating table name={}", table.name());
                setup.execute(table.sql(), "table '" + table.name() + "' (" + table.path() + ")");
            }
        } catch (RuntimeException e) {
            if (setup.views != null) {
                setup.views.close();
            }
            throw e;
        }
        return Optional.ofNullable(setup.views);
    }

    private void attachViews() {
        views = MaterializedViews.attach(connection);
        front = new ViewSql(views);
        LOG.info("materialized views attached views={}", views.names().size());
    }

    private void execute(String sql, String what) {
        try (Statement statement = connection.createStatement()) {
            for (SqlScript.Statement each : SqlScript.split(sql)) {
                if (front == null && ViewSql.recognizes(each.sql())) {
                    attachViews();
                }
                try {
                    if (front != null) {
                        front.execute(each.sql()).close();
                    } else {
                        statement.execute(each.sql());
                    }
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, what + ", statement on line " + each.line()
                            + " failed: " + e.getMessage());
                } catch (MallardException e) {
                    throw new MallardException(e.errorCode(), what + ", statement on line " + each.line() + " failed: " + e.getMessage(), e);
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot run " + what + ": " + e.getMessage(), e);
        }
    }
}
