// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.MallardException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBDriver;

/**
 * {@code jdbc:mallard:<path>} (or {@code jdbc:mallard:} / {@code jdbc:mallard::memory:} in memory): DuckDB's
 * JDBC driver with materialized views. Statements run through the {@link ViewSql} front door, so
 * {@code CREATE MATERIALIZED VIEW} and the {@code dbsp_*} calls work from any JDBC tool, and the views are
 * synced after every write in auto-commit mode, after {@code commit()} and when auto-commit is switched on.
 * Registered through {@code META-INF/services/java.sql.Driver}.
 *
 * <p>View statements go through {@link Statement}; a {@link PreparedStatement} runs plain DuckDB SQL
 * (its writes are synced like any other).
 */
public final class MallardDriver implements Driver {
    public static final String PREFIX = "jdbc:mallard:";
    /** The URL or connection property naming the DuckDB release a new file must open in ({@link StorageCompatibility}). */
    public static final String STORAGE_COMPATIBILITY = "storage_compatibility";
    private static final Set<String> SYNCING_UPDATES = Set.of("execute", "executeUpdate", "executeLargeUpdate",
            "executeBatch", "executeLargeBatch");

    static {
        try {
            DriverManager.registerDriver(new MallardDriver());
        } catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null;
        }
        Properties properties = new Properties();
        if (info != null) {
            properties.putAll(info);
        }
        List<String> parts = new ArrayList<>(List.of(url.substring(PREFIX.length()).split(";", -1)));
        String path = parts.removeFirst();
        // Mallard's own key, in the URL (;storage_compatibility=v1.0.0) or the properties; DuckDB's
        // storage_compatibility_version passes through to DuckDB untouched.
        Optional<String> asked = Optional.ofNullable((String) properties.remove(STORAGE_COMPATIBILITY));
        for (Iterator<String> it = parts.iterator(); it.hasNext(); ) {
            String part = it.next();
            int equals = part.indexOf('=');
            if (equals > 0 && part.substring(0, equals).trim().equalsIgnoreCase(STORAGE_COMPATIBILITY)) {
                asked = Optional.of(part.substring(equals + 1).trim());
                it.remove();
            }
        }
        StorageCompatibility compatibility;
        try {
            compatibility = asked.isPresent() ? StorageCompatibility.of(asked.get(), STORAGE_COMPATIBILITY) : StorageCompatibility.DEFAULT;
        } catch (MallardException e) {
            throw asSql(e);
        }
        boolean inMemory = path.isEmpty() || path.equals(":memory:");
        String duckUrl = (inMemory ? "jdbc:duckdb:" : "jdbc:duckdb:" + path) + parts.stream().map(part -> ";" + part).collect(Collectors.joining());
        DuckDBConnection duck = (DuckDBConnection) new DuckDBDriver().connect(duckUrl, compatibility.applyTo(properties));
        try {
            compatibility.check(duck, inMemory ? ":memory:" : path);
            MaterializedViews views = MaterializedViews.attach(duck);
            return (Connection) Proxy.newProxyInstance(MallardDriver.class.getClassLoader(), new Class<?>[] {Connection.class},
                    new ConnectionHandler(duck, views, new ViewSql(views), new AtomicReference<>()));
        } catch (MallardException e) {
            duck.close();
            throw asSql(e);
        }
    }

    @Override
    public boolean acceptsURL(String url) {
        return url != null && url.startsWith(PREFIX);
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
        return new DriverPropertyInfo[0];
    }

    @Override
    public int getMajorVersion() {
        return 0;
    }

    @Override
    public int getMinorVersion() {
        return 1;
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("java.util.logging is not used; Mallard logs through SLF4J");
    }

    private static Object delegate(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static SQLException asSql(MallardException e) {
        return new SQLException(e.describe(), e.errorCode().errorClass().equals("user") ? "42000" : "58000", e);
    }

    /** The connection: statements through the front door, a sync after each commit. */
    private record ConnectionHandler(DuckDBConnection duck, MaterializedViews views, ViewSql front,
            AtomicReference<Object> transaction) implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            try {
                switch (method.getName()) {
                    case "createStatement" -> {
                        Statement statement = (Statement) delegate(duck, method, args);
                        return Proxy.newProxyInstance(MallardDriver.class.getClassLoader(), new Class<?>[] {Statement.class},
                                new StatementHandler(statement, front, duck, (Connection) proxy));
                    }
                    case "prepareStatement" -> {
                        PreparedStatement statement = (PreparedStatement) delegate(duck, method, args);
                        List<SqlTokens.Token> tokens = SqlTokens.of((String) args[0]);
                        return Proxy.newProxyInstance(MallardDriver.class.getClassLoader(),
                                new Class<?>[] {PreparedStatement.class}, new PreparedHandler(statement, duck, front, (Connection) proxy,
                                        tokens));
                    }
                    case "commit" -> {
                        duck.commit();
                        transactionEnded(!duck.getAutoCommit());
                        front.syncAfterWrite();
                        return null;
                    }
                    case "rollback" -> {
                        delegate(duck, method, args);
                        if (args == null || args.length == 0) {
                            transactionEnded(!duck.getAutoCommit());
                        }
                        return null;
                    }
                    case "setAutoCommit" -> {
                        duck.setAutoCommit((Boolean) args[0]);
                        if ((Boolean) args[0]) {
                            transactionEnded(false);
                            front.syncAfterWrite();
                        } else if (transaction.get() == null) {
                            transactionEnded(true);
                        }
                        return null;
                    }
                    case "close" -> {
                        transactionEnded(false);
                        try {
                            views.close();
                        } finally {
                            duck.close();
                        }
                        return null;
                    }
                    case "unwrap" -> {
                        Class<?> type = (Class<?>) args[0];
                        return type.isInstance(proxy) ? proxy : duck.unwrap(type);
                    }
                    case "isWrapperFor" -> {
                        Class<?> type = (Class<?>) args[0];
                        return type.isInstance(proxy) || duck.isWrapperFor(type);
                    }
                    default -> {
                        return delegate(duck, method, args);
                    }
                }
            } catch (MallardException e) {
                throw asSql(e);
            }
        }

        /**
         * The connection's current transaction ended (for a view created while it was open, see
         * {@link MaterializedViews#transactionStarted}); with {@code another}, the next one (manual mode) has begun.
         */
        private void transactionEnded(boolean another) {
            Object ended = transaction.getAndSet(another ? new Object() : null);
            if (ended != null) {
                views.transactionEnded(ended);
            }
            Object started = transaction.get();
            if (started != null) {
                views.transactionStarted(started);
            }
        }
    }

    /** A statement: SQL through the front door; everything else (fetch size, timeouts, ...) to DuckDB's. */
    private static final class StatementHandler implements InvocationHandler {
        private final Statement statement;
        private final ViewSql front;
        private final DuckDBConnection duck;
        private final Connection connection;
        private ViewSql.Result current;

        StatementHandler(Statement statement, ViewSql front, DuckDBConnection duck, Connection connection) {
            this.statement = statement;
            this.front = front;
            this.duck = duck;
            this.connection = connection;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            boolean sqlArgument = args != null && args.length >= 1 && args[0] instanceof String;
            try {
                switch (method.getName()) {
                    case "execute" -> {
                        if (sqlArgument) {
                            return run((String) args[0]).rows().isPresent();
                        }
                    }
                    case "executeQuery" -> {
                        if (sqlArgument) {
                            return run((String) args[0]).rows()
                                    .orElseThrow(() -> new SQLException("the statement returned no result set: " + args[0]));
                        }
                    }
                    case "executeUpdate", "executeLargeUpdate" -> {
                        if (sqlArgument) {
                            long count = Math.max(run((String) args[0]).updateCount(), 0);
                            return method.getName().equals("executeUpdate") ? (Object) (int) count : (Object) count;
                        }
                    }
                    case "getResultSet" -> {
                        return current == null ? null : current.rows().orElse(null);
                    }
                    case "getUpdateCount", "getLargeUpdateCount" -> {
                        long count = current == null || current.rows().isPresent() ? -1 : Math.max(current.updateCount(), 0);
                        return method.getName().equals("getUpdateCount") ? (Object) (int) count : (Object) count;
                    }
                    case "getMoreResults" -> {
                        closeCurrent();
                        return false;
                    }
                    case "getConnection" -> {
                        return connection;
                    }
                    case "executeBatch", "executeLargeBatch" -> {
                        // A batch runs in DuckDB as it is (no view statements in it); its writes are synced.
                        Object counts = delegate(statement, method, args);
                        front.wrote(batchRows(counts));
                        if (front.autoSync() && duck.getAutoCommit()) {
                            front.syncAfterWrite();
                        }
                        return counts;
                    }
                    case "close" -> {
                        closeCurrent();
                        statement.close();
                        return null;
                    }
                    default -> {
                        // Falls through to DuckDB's statement below.
                    }
                }
                return delegate(statement, method, args);
            } catch (MallardException e) {
                throw asSql(e);
            }
        }

        private ViewSql.Result run(String sql) {
            closeCurrent();
            current = front.execute(sql);
            return current;
        }

        private void closeCurrent() {
            if (current != null) {
                current.close();
                current = null;
            }
        }
    }

    /**
     * A prepared statement runs in DuckDB; the rows each execution changed are told to the front door, and a write in
     * auto-commit mode is followed by a sync.
     */
    private record PreparedHandler(PreparedStatement statement, DuckDBConnection duck, ViewSql front,
            Connection connection, List<SqlTokens.Token> tokens) implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getName().equals("getConnection")) {
                return connection;
            }
            boolean execution = args == null || args.length == 0;
            if (execution && (SYNCING_UPDATES.contains(method.getName()) || method.getName().equals("executeQuery"))) {
                try {
                    front.syncBeforeReading(tokens);
                } catch (MallardException e) {
                    throw asSql(e);
                }
            }
            Object result = delegate(statement, method, args);
            if (execution && method.getName().equals("executeQuery")) {
                front.wrote(-1); // A query may have written (INSERT ... RETURNING): its rows are not counted.
                if (ViewSql.mayWrite(tokens) && front.autoSync() && duck.getAutoCommit()) {
                    front.syncAfterWrite();
                }
            }
            if (SYNCING_UPDATES.contains(method.getName()) && execution) {
                front.wrote(switch (result) {
                    case Boolean rows -> rows ? -1 : statement.getUpdateCount();
                    case Number count -> count.longValue();
                    default -> batchRows(result);
                });
                if (duck.getAutoCommit()) {
                    try {
                        front.syncAfterWrite();
                    } catch (MallardException e) {
                        throw asSql(e);
                    }
                }
            }
            return result;
        }
    }

    /** The rows a batch changed by its update counts, or -1 when a count is not known. */
    private static long batchRows(Object counts) {
        long rows = 0;
        if (counts instanceof int[] ints) {
            for (int count : ints) {
                rows = count < 0 || rows < 0 ? -1 : rows + count;
            }
        } else if (counts instanceof long[] longs) {
            for (long count : longs) {
                rows = count < 0 || rows < 0 ? -1 : rows + count;
            }
        } else {
            rows = -1;
        }
        return rows;
    }
}
