// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Where {@code mallard sql} runs its statements: a DuckDB database in this process, or a running server. */
interface SqlTarget extends AutoCloseable {
    /** What the shell's greeting names: a file, an in-memory database, a server. */
    String describe();

    /** Runs one statement and prints its rows or its status line. */
    void run(String sql, ResultPrinter printer);

    /** Runs a small query (the shell's catalog lookups) and returns its rows' values as text, null for NULL. */
    List<List<String>> rows(String sql);

    /** Every row of {@code rows}, read to the end. */
    static List<List<String>> collect(ResultPrinter.Rows rows) {
        List<List<String>> all = new java.util.ArrayList<>();
        int columns = rows.columns().size();
        while (rows.next()) {
            List<String> row = new java.util.ArrayList<>(columns);
            for (int i = 0; i < columns; i++) {
                row.add(rows.value(i));
            }
            all.add(row);
        }
        return all;
    }

    @Override
    void close();

    /** A DuckDB database file, or an in-memory one, through the materialized views' front door. */
    static SqlTarget local(Path database, StorageCompatibility compatibility) {
        return new Local(database, compatibility);
    }

    /** A Mallard server over Arrow Flight SQL ({@code grpc+tcp://host:port} or {@code grpc+tls://host:port}). */
    static SqlTarget server(URI location, String user, String password) {
        return new Remote(location, user, password);
    }

    final class Local implements SqlTarget {
        private final String description;
        private final Engine engine;
        private final MaterializedViews views;
        private final ViewSql front;

        private Local(Path database, StorageCompatibility compatibility) {
            boolean inMemory = database == null || database.toString().equals(SqlCommand.IN_MEMORY);
            this.description = inMemory ? "an in-memory database" : database.toString();
            this.engine = inMemory ? Engine.inMemory() : Engine.onFile(database, compatibility);
            try {
                this.views = MaterializedViews.attach(engine.connection()).registerFunctions();
            } catch (RuntimeException e) {
                engine.close();
                throw e;
            }
            this.front = new ViewSql(views);
        }

        @Override
        public String describe() {
            return description;
        }

        @Override
        public void run(String sql, ResultPrinter printer) {
            try (ViewSql.Result result = front.execute(sql)) {
                if (result.rows().isPresent()) {
                    printer.print(result.rows().get(), engine.allocator());
                } else {
                    printer.status(result.message().orElse(result.updateCount() >= 0 ? "OK " + result.updateCount() : "OK"));
                }
            }
        }

        @Override
        public List<List<String>> rows(String sql) {
            try (ViewSql.Result result = front.execute(sql)) {
                if (result.rows().isEmpty()) {
                    return List.of();
                }
                return SqlTarget.collect(ResultPrinter.jdbcRows(result.rows().get()));
            } catch (java.sql.SQLException e) {
                throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the query's rows failed: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            try {
                views.close();
            } finally {
                engine.close();
            }
        }
    }

    final class Remote implements SqlTarget {
        private final URI location;
        private final BufferAllocator allocator;
        private final FlightClient client;
        private final FlightSqlClient sql;
        private final CredentialCallOption bearer;

        private Remote(URI location, String user, String password) {
            this.location = requireNonNull(location, "location is null");
            requireNonNull(user, "user is null");
            requireNonNull(password, "password is null");
            this.allocator = new RootAllocator();
            try {
                this.client = FlightClient.builder(allocator, new Location(location)).build();
                this.bearer = client.authenticateBasicToken(user, password).orElseThrow(() -> new MallardException(
                        ErrorCode.USER_AUTH_FAILED, location + " answered the login of " + user + " with no token"));
                this.sql = new FlightSqlClient(client);
            } catch (FlightRuntimeException e) {
                allocator.close();
                throw failure(e, "logging in as " + user);
            } catch (RuntimeException e) {
                allocator.close();
                throw e;
            }
        }

        @Override
        public String describe() {
            return location.toString();
        }

        @Override
        public void run(String statement, ResultPrinter printer) {
            try {
                FlightInfo info = sql.execute(statement, bearer);
                long total = 0;
                for (FlightEndpoint endpoint : info.getEndpoints()) {
                    try (FlightStream stream = sql.getStream(endpoint.getTicket(), bearer)) {
                        if (printer.format() == ResultPrinter.Format.jsonl) {
                            while (stream.next()) {
                                total += printer.printJsonLines(stream.getRoot(), stream.getDictionaryProvider(), total);
                            }
                        } else {
                            printer.print(streamRows(stream));
                        }
                    }
                }
                if (printer.format() == ResultPrinter.Format.jsonl) {
                    printer.noteLeftOut(total);
                }
            } catch (FlightRuntimeException e) {
                throw failure(e, "running the statement");
            } catch (MallardException e) {
                throw e;
            } catch (Exception e) {
                throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "reading the result from " + location + " failed: " + e.getMessage(), e);
            }
        }

        @Override
        public List<List<String>> rows(String statement) {
            try {
                List<List<String>> all = new java.util.ArrayList<>();
                for (FlightEndpoint endpoint : sql.execute(statement, bearer).getEndpoints()) {
                    try (FlightStream stream = sql.getStream(endpoint.getTicket(), bearer)) {
                        all.addAll(SqlTarget.collect(streamRows(stream)));
                    }
                }
                return all;
            } catch (FlightRuntimeException e) {
                throw failure(e, "running the statement");
            } catch (MallardException e) {
                throw e;
            } catch (Exception e) {
                throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "reading the result from " + location + " failed: " + e.getMessage(), e);
            }
        }

        /** The rows of every batch of a stream, in order. */
        private static ResultPrinter.Rows streamRows(FlightStream stream) {
            VectorSchemaRoot root = stream.getRoot();
            List<String> columns = root.getSchema().getFields().stream().map(field -> field.getName()).toList();
            return new ResultPrinter.Rows() {
                private ResultPrinter.Rows batch;

                @Override
                public List<String> columns() {
                    return columns;
                }

                @Override
                public boolean next() {
                    while (batch == null || !batch.next()) {
                        if (!stream.next()) {
                            return false;
                        }
                        batch = ResultPrinter.arrowRows(root);
                    }
                    return true;
                }

                @Override
                public String value(int index) {
                    return batch.value(index);
                }
            };
        }

        /** The server's error as Mallard's: its message starts with the code when the server raised it. */
        private MallardException failure(FlightRuntimeException e, String doing) {
            CallStatus status = e.status();
            String message = Redactor.redact(String.valueOf(status.description()));
            ErrorCode code = switch (status.code()) {
                case UNAUTHENTICATED -> ErrorCode.USER_AUTH_FAILED;
                case UNAVAILABLE -> ErrorCode.SYSTEM_IO_FAILED;
                default -> ErrorCode.USER_SQL_INVALID;
            };
            for (ErrorCode candidate : ErrorCode.values()) {
                if (message.startsWith(candidate.code() + ": ")) {
                    code = candidate;
                    message = message.substring(candidate.code().length() + 2);
                    break;
                }
            }
            if (status.code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE) {
                message = location + " is not reachable (" + message + "); is `mallard server` running there?";
            }
            return new MallardException(code, doing + " on " + location + ": " + message, e);
        }

        @Override
        public void close() {
            try {
                client.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                allocator.close();
            }
        }
    }
}
