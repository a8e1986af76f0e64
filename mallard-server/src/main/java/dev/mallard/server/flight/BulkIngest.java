// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.session.Session;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.apache.arrow.memory.BufferAllocator;

/**
 * CommandStatementIngest: the DoPut stream is handed to DuckDB as an Arrow stream (a temporary view on the
 * session's connection) and copied into the table with one statement: CREATE TABLE AS, INSERT, or CREATE OR
 * REPLACE TABLE AS, as the table definition options ask. A missing table is created unless the options say
 * FAIL; an existing one fails unless they say APPEND or REPLACE.
 */
final class BulkIngest {
    private BulkIngest() {}

    static long run(Session session, CommandStatementIngest command, FlightStream stream, BufferAllocator allocator) {
        String table = target(command);
        TableExistsOption ifExists = command.getTableDefinitionOptions().getIfExists();
        TableNotExistOption ifMissing = command.getTableDefinitionOptions().getIfNotExist();
        String view = "__mallard_ingest_" + UUID.randomUUID().toString().replace("-", "");
        return session.sql(connection -> {
            boolean exists = exists(connection, command);
            String sql;
            if (exists) {
                sql = switch (ifExists) {
                    case TABLE_EXISTS_OPTION_APPEND -> "INSERT INTO " + table + " SELECT * FROM " + view;
                    case TABLE_EXISTS_OPTION_REPLACE -> "CREATE OR REPLACE TABLE " + table + " AS SELECT * FROM " + view;
                    default -> throw new MallardException(ErrorCode.USER_SQL_INVALID, "table " + table
                            + " exists; ingest with if_exists APPEND or REPLACE to write into it");
                };
            } else if (ifMissing == TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, "table " + table + " does not exist; ingest with if_not_exist CREATE to create it");
            } else {
                sql = "CREATE " + (command.getTemporary() ? "TEMP " : "") + "TABLE " + table + " AS SELECT * FROM " + view;
            }
            try (FlightStreamReader reader = new FlightStreamReader(allocator, stream);
                    ArrowArrayStream arrow = ArrowArrayStream.allocateNew(allocator)) {
                Data.exportArrayStream(allocator, reader, arrow);
                connection.registerArrowStream(view, arrow);
                try (Statement statement = connection.createStatement()) {
                    statement.execute(sql);
                } finally {
                    try (Statement statement = connection.createStatement()) {
                        // The view points at the native stream freed below; it must not outlive it.
                        statement.execute("DROP VIEW IF EXISTS temp.main." + view);
                    }
                }
                return reader.rows();
            } catch (java.io.IOException e) {
                throw new SQLException("reading the ingested stream failed: " + e.getMessage(), e);
            }
        });
    }

    private static boolean exists(java.sql.Connection connection, CommandStatementIngest command) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?");
        if (command.getTemporary()) {
            sql.append(" AND temporary");
        } else {
            if (command.hasCatalog()) {
                sql.append(" AND database_name = ?");
            }
            sql.append(" AND schema_name = ?");
        }
        try (PreparedStatement statement = connection.prepareStatement(sql.toString())) {
            int index = 1;
            statement.setString(index++, command.getTable());
            if (!command.getTemporary()) {
                if (command.hasCatalog()) {
                    statement.setString(index++, command.getCatalog());
                }
                statement.setString(index, command.hasSchema() ? command.getSchema() : "main");
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    private static String target(CommandStatementIngest command) {
        if (command.getTable().isBlank()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the ingest names no table");
        }
        if (command.getTemporary()) {
            return SqlText.identifier(command.getTable());
        }
        StringBuilder name = new StringBuilder();
        if (command.hasCatalog()) {
            name.append(SqlText.identifier(command.getCatalog())).append('.');
        }
        if (command.hasSchema() || command.hasCatalog()) {
            name.append(SqlText.identifier(command.hasSchema() ? command.getSchema() : "main")).append('.');
        }
        return name.append(SqlText.identifier(command.getTable())).toString();
    }
}
