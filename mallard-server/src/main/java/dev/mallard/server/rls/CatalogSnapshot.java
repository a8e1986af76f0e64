// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a session's DuckDB catalog holds as one statement is rewritten: its tables and views and the functions users
 * defined (from the server's {@link CatalogCache}), and where bare names resolve. Names resolve as DuckDB resolves them: a bare name in
 * {@code temp.main}, then the default schema, then the default catalog's {@code main}; {@code a.b} as schema
 * {@code a} of the default catalog or catalog {@code a}'s {@code main} (both existing is refused as ambiguous).
 */
final class CatalogSnapshot {
    private final List<CatalogObject> objects;
    private final Connection connection;
    private final CatalogCache userFunctions;
    private final String defaultDatabase;
    private final String defaultSchema;
    private final boolean customSearchPath;

    private CatalogSnapshot(Connection connection, List<CatalogObject> objects, CatalogCache userFunctions, String defaultDatabase,
            String defaultSchema, boolean customSearchPath) {
        this.connection = connection;
        this.objects = List.copyOf(objects);
        this.userFunctions = userFunctions;
        this.defaultDatabase = defaultDatabase;
        this.defaultSchema = defaultSchema;
        this.customSearchPath = customSearchPath;
    }

    /**
     * @param database the {@code database} claim, @param schema the {@code schema} claim: the defaults for bare names
     *     when given, else the session's ({@code sessionDefaults}, read once per session: a restricted session cannot USE
     *     or SET)
     */
    static CatalogSnapshot read(Connection connection, Optional<String> database, Optional<String> schema, CatalogCache cache,
            SessionDefaults sessionDefaults) throws SQLException {
        return new CatalogSnapshot(connection, cache.objects(connection), cache, database.orElse(sessionDefaults.database()),
                schema.orElse(sessionDefaults.schema()), sessionDefaults.customSearchPath());
    }

    /** The session's current catalog and schema, and whether it sets a search_path. */
    record SessionDefaults(String database, String schema, boolean customSearchPath) {
        static SessionDefaults read(Connection connection) throws SQLException {
            try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT system.main.current_database(),"
                    + " system.main.current_schema(), system.main.current_setting('search_path')")) {
                rs.next();
                return new SessionDefaults(rs.getString(1), rs.getString(2), rs.getString(3) != null && !rs.getString(3).isBlank());
            }
        }
    }

    String defaultDatabase() {
        return defaultDatabase;
    }

    String defaultSchema() {
        return defaultSchema;
    }

    boolean isUserFunction(String name) {
        try {
            return userFunctions.isUserFunction(connection, name);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read DuckDB's functions: " + e.getMessage(), e);
        }
    }

    /**
     * The object a table reference names.
     *
     * @throws MallardException {@code user.access.denied} when it names none, or names two
     */
    CatalogObject resolve(String catalog, String schema, String name) {
        String written = (catalog.isEmpty() ? "" : catalog + ".") + (schema.isEmpty() ? "" : schema + ".") + name;
        List<List<String>> candidates = new ArrayList<>();
        if (!catalog.isEmpty()) {
            candidates.add(List.of(catalog, schema, name));
        } else if (!schema.isEmpty()) {
            List<CatalogObject> both = new ArrayList<>();
            find(defaultDatabase, schema, name).ifPresent(both::add);
            find(schema, "main", name).ifPresent(both::add);
            if (both.size() > 1) {
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + written + ": it names both "
                        + both.get(0) + " and " + both.get(1) + "; write the name in full (catalog.schema.table)");
            }
            return both.stream().findFirst().orElseThrow(() -> noAccess(written));
        } else {
            if (customSearchPath) {
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + written + ": the session sets a search_path, under"
                        + " which row-level security does not resolve bare names; write the name in full (catalog.schema.table)");
            }
            candidates.add(List.of("temp", "main", name));
            candidates.add(List.of(defaultDatabase, defaultSchema, name));
            candidates.add(List.of(defaultDatabase, "main", name));
        }
        for (List<String> candidate : candidates) {
            Optional<CatalogObject> found = find(candidate.get(0), candidate.get(1), candidate.get(2));
            if (found.isPresent()) {
                return found.get();
            }
        }
        throw noAccess(written);
    }

    private Optional<CatalogObject> find(String database, String schema, String name) {
        return objects.stream().filter(object -> object.is(database, schema, name)).findFirst();
    }

    static MallardException noAccess(String what) {
        return new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + what);
    }
}
