package dev.mallard.server.rls;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a session's DuckDB catalog holds as one statement is rewritten: its tables and views, the materialized views
 * of the views module ({@code mallard_views.views}), and where bare names resolve; and, through {@link UserFunctions},
 * the functions users defined. Names resolve as DuckDB resolves them: a bare name in
 * {@code temp.main}, then the default schema, then the default catalog's {@code main}; {@code a.b} as schema
 * {@code a} of the default catalog or catalog {@code a}'s {@code main} (both existing is refused as ambiguous).
 */
final class CatalogSnapshot {
    private static final String VIEWS_SCHEMA = "mallard_views";

    private final List<CatalogObject> objects;
    private final Connection connection;
    private final UserFunctions userFunctions;
    private final String defaultDatabase;
    private final String defaultSchema;
    private final boolean customSearchPath;

    private CatalogSnapshot(Connection connection, List<CatalogObject> objects, UserFunctions userFunctions, String defaultDatabase,
            String defaultSchema, boolean customSearchPath) {
        this.connection = connection;
        this.objects = List.copyOf(objects);
        this.userFunctions = userFunctions;
        this.defaultDatabase = defaultDatabase;
        this.defaultSchema = defaultSchema;
        this.customSearchPath = customSearchPath;
    }

    /** @param database the {@code database} claim; @param schema the {@code schema} claim: the defaults for bare names when given */
    static CatalogSnapshot read(Connection connection, Optional<String> database, Optional<String> schema, UserFunctions functions)
            throws SQLException {
        List<CatalogObject> objects = new ArrayList<>();
        Map<String, Map<String, String>> materialized = new HashMap<>();
        String currentDatabase = null;
        String currentSchema = null;
        boolean customPath = false;
        try (Statement statement = connection.createStatement()) {
            List<String> registries = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery("SELECT 'C', system.main.current_database(), system.main.current_schema(), system.main.current_setting('search_path'), NULL"
                    + " UNION ALL SELECT 'T', database_name, schema_name, table_name, NULL FROM system.main.duckdb_tables()"
                    + " UNION ALL SELECT 'V', database_name, schema_name, view_name, sql FROM system.main.duckdb_views() WHERE NOT internal")) {
                while (rs.next()) {
                    switch (rs.getString(1)) {
                        case "C" -> {
                            currentDatabase = rs.getString(2);
                            currentSchema = rs.getString(3);
                            customPath = rs.getString(4) != null && !rs.getString(4).isBlank();
                        }
                        case "T" -> {
                            objects.add(new CatalogObject(rs.getString(2), rs.getString(3), rs.getString(4), CatalogObject.Kind.TABLE, Optional.empty()));
                            if (rs.getString(3).equals(VIEWS_SCHEMA) && rs.getString(4).equals("views")) {
                                registries.add(rs.getString(2));
                            }
                        }
                        default -> objects.add(new CatalogObject(rs.getString(2), rs.getString(3), rs.getString(4), CatalogObject.Kind.VIEW,
                                Optional.of(rs.getString(5))));
                    }
                }
            }
            for (String registry : registries) {
                Map<String, String> views = new HashMap<>();
                try (ResultSet rs = statement.executeQuery("SELECT name, sql FROM " + ParseTree.quote(registry) + "." + VIEWS_SCHEMA + ".views")) {
                    while (rs.next()) {
                        views.put(CatalogObject.lower(rs.getString(1)), rs.getString(2));
                    }
                }
                materialized.put(registry, views);
            }
        }
        List<CatalogObject> resolved = new ArrayList<>();
        for (CatalogObject object : objects) {
            Map<String, String> views = materialized.getOrDefault(object.database(), Map.of());
            String definition = object.schema().equals("main") ? views.get(CatalogObject.lower(object.name())) : null;
            resolved.add(definition == null ? object
                    : new CatalogObject(object.database(), object.schema(), object.name(), CatalogObject.Kind.MATERIALIZED_VIEW, Optional.of(definition)));
        }
        return new CatalogSnapshot(connection, resolved, functions, database.orElse(currentDatabase), schema.orElse(currentSchema), customPath);
    }

    String defaultDatabase() {
        return defaultDatabase;
    }

    String defaultSchema() {
        return defaultSchema;
    }

    boolean isUserFunction(String name) {
        try {
            return userFunctions.contains(connection, name);
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
