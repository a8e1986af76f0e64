package dev.mallard.server.rls;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The names of the functions users defined in DuckDB's catalog (macros, table macros, UDFs), which the rewriter
 * refuses: a macro's body can read a table the rewrite never sees, and it may even shadow a built-in name. Read once,
 * at the first statement, because {@code duckdb_functions()} costs tens of milliseconds: on a RESTRICTED or
 * RESTRICT_READ_ONLY server no session can create a function (only SELECT runs), so the set is the one the startup
 * script left. The views module's {@code dbsp_*} functions are refused by name whenever they were registered.
 */
public final class UserFunctions {
    private static final String VIEWS_PREFIX = "dbsp_";

    private volatile Set<String> names;

    boolean contains(Connection connection, String function) throws SQLException {
        String name = function.toLowerCase(Locale.ROOT);
        return name.startsWith(VIEWS_PREFIX) || names(connection).contains(name);
    }

    private Set<String> names(Connection connection) throws SQLException {
        Set<String> known = names;
        if (known == null) {
            synchronized (this) {
                known = names;
                if (known == null) {
                    Set<String> read = new HashSet<>();
                    try (Statement statement = connection.createStatement();
                            ResultSet rs = statement.executeQuery("SELECT function_name FROM system.main.duckdb_functions() WHERE NOT internal")) {
                        while (rs.next()) {
                            read.add(rs.getString(1).toLowerCase(Locale.ROOT));
                        }
                    }
                    known = Set.copyOf(read);
                    names = known;
                }
            }
        }
        return known;
    }
}
