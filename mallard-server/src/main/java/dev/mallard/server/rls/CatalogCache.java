// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the rewriter needs of DuckDB's catalog, read once per server at the first statement and shared by its
 * sessions: the tables and views (with the materialized views of the views module's {@code mallard_views.views}),
 * and the names of the functions users defined (macros, table macros, UDFs), which the rewriter refuses, since a
 * macro's body can read a table the rewrite never sees and may even shadow a built-in name. Reading it per statement
 * would cost milliseconds ({@code duckdb_functions()} alone tens of them); reading it once is exact because on a
 * RESTRICTED or RESTRICT_READ_ONLY server no statement but a single SELECT without user functions ever runs, so
 * nothing changes the catalog after the startup script. The views module's {@code dbsp_*} functions are refused by
 * name whenever they were registered.
 */
public final class CatalogCache {
    private static final String VIEWS_PREFIX = "dbsp_";
    private static final String VIEWS_SCHEMA = "mallard_views";

    private volatile Set<String> functions;
    private volatile List<CatalogObject> objects;
    /** Rewrites made over this catalog: they live as long as it does. */
    private final RewriteCache rewrites;

    public CatalogCache() {
        this(new RewriteCache());
    }

    /** With the given rewrite cache: tests compare rewrites made through a cache with those made without. */
    CatalogCache(RewriteCache rewrites) {
        this.rewrites = java.util.Objects.requireNonNull(rewrites, "rewrites is null");
    }

    RewriteCache rewrites() {
        return rewrites;
    }

    boolean isUserFunction(Connection connection, String function) throws SQLException {
        String name = function.toLowerCase(Locale.ROOT);
        return name.startsWith(VIEWS_PREFIX) || functions(connection).contains(name);
    }

    private Set<String> functions(Connection connection) throws SQLException {
        Set<String> known = functions;
        if (known == null) {
            synchronized (this) {
                known = functions;
                if (known == null) {
                    Set<String> read = new HashSet<>();
                    try (Statement statement = connection.createStatement();
                            ResultSet rs = statement.executeQuery("SELECT function_name FROM system.main.duckdb_functions() WHERE NOT internal")) {
                        while (rs.next()) {
                            read.add(rs.getString(1).toLowerCase(Locale.ROOT));
                        }
                    }
                    known = Set.copyOf(read);
                    functions = known;
                }
            }
        }
        return known;
    }

    List<CatalogObject> objects(Connection connection) throws SQLException {
        List<CatalogObject> known = objects;
        if (known == null) {
            synchronized (this) {
                known = objects;
                if (known == null) {
                    known = readObjects(connection);
                    objects = known;
                }
            }
        }
        return known;
    }

    private static List<CatalogObject> readObjects(Connection connection) throws SQLException {
        List<CatalogObject> found = new ArrayList<>();
        Map<String, Map<String, String>> materialized = new HashMap<>();
        try (Statement statement = connection.createStatement()) {
            List<String> registries = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery("SELECT 'T', database_name, schema_name, table_name, NULL FROM system.main.duckdb_tables()"
                    + " UNION ALL SELECT 'V', database_name, schema_name, view_name, sql FROM system.main.duckdb_views() WHERE NOT internal")) {
                while (rs.next()) {
                    if (rs.getString(1).equals("T")) {
                        found.add(new CatalogObject(rs.getString(2), rs.getString(3), rs.getString(4), CatalogObject.Kind.TABLE, Optional.empty()));
                        if (rs.getString(3).equals(VIEWS_SCHEMA) && rs.getString(4).equals("views")) {
                            registries.add(rs.getString(2));
                        }
                    } else {
                        found.add(new CatalogObject(rs.getString(2), rs.getString(3), rs.getString(4), CatalogObject.Kind.VIEW, Optional.of(rs.getString(5))));
                    }
                }
            }
            for (String registry : registries) {
                Map<String, String> views = new HashMap<>();
                try (ResultSet rs = statement.executeQuery("SELECT name, sql FROM " + SqlText.identifier(registry) + "." + VIEWS_SCHEMA + ".views")) {
                    while (rs.next()) {
                        views.put(CatalogObject.lower(rs.getString(1)), rs.getString(2));
                    }
                }
                materialized.put(registry, views);
            }
        }
        List<CatalogObject> resolved = new ArrayList<>();
        for (CatalogObject object : found) {
            Map<String, String> views = materialized.getOrDefault(object.database(), Map.of());
            String definition = object.schema().equals("main") ? views.get(CatalogObject.lower(object.name())) : null;
            resolved.add(definition == null ? object
                    : new CatalogObject(object.database(), object.schema(), object.name(), CatalogObject.Kind.MATERIALIZED_VIEW, Optional.of(definition)));
        }
        return List.copyOf(resolved);
    }
}
