// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code sink.iceberg} block: SQLFlow's {@code catalog_name} and {@code table_name}, and where that catalog
 * is. SQLFlow (pyiceberg) finds a catalog by name in {@code .pyiceberg.yaml} ({@code $PYICEBERG_HOME}, else the
 * home directory) or in {@code PYICEBERG_CATALOG__<NAME>__URI}/{@code __WAREHOUSE} variables; Mallard reads the same
 * places, and a {@code catalog} block in the sink itself goes first.
 *
 * @param jdbcUrl the catalog database as a JDBC URL (a SQLAlchemy URL such as {@code sqlite:////tmp/c.db} is converted)
 * @param warehouse the local directory tables are created under
 */
public record IcebergSettings(String catalogName, List<String> namespace, String table, String jdbcUrl, Optional<String> user,
        Optional<String> password, Path warehouse) {
    public static final String BLOCK = "pipeline.sink.iceberg";

    public IcebergSettings {
        requireNonNull(catalogName, "catalogName is null");
        namespace = List.copyOf(namespace);
        requireNonNull(table, "table is null");
        requireNonNull(jdbcUrl, "jdbcUrl is null");
        requireNonNull(user, "user is null");
        requireNonNull(password, "password is null");
        requireNonNull(warehouse, "warehouse is null");
    }

    /** A fault in the block: the key at fault (below the sink's block) and what to do. */
    public record Problem(String key, ErrorCode code, String message) {}

    /** Reads the block, finding the catalog as pyiceberg would in {@code environment} when the block names none. */
    public static IcebergSettings of(JsonNode block, Map<String, String> environment) {
        List<Problem> problems = new ArrayList<>();
        Optional<IcebergSettings> settings = read(block, environment, problems);
        if (!problems.isEmpty()) {
            Problem first = problems.getFirst();
            throw new MallardException(first.code(), first.key() + ": " + first.message());
        }
        return settings.orElseThrow();
    }

    /**
     * The faults {@code mallard validate} reports, without reaching the catalog: a {@code catalog} block that
     * cannot work, a table name without its namespace. A catalog left to {@code .pyiceberg.yaml} is looked up at run.
     */
    public static List<Problem> problems(JsonNode block) {
        List<Problem> problems = new ArrayList<>();
        tableName(block, problems);
        if (block.path("catalog").isObject()) {
            catalog(block.path("catalog"), "catalog", problems);
        }
        return problems;
    }

    private static Optional<IcebergSettings> read(JsonNode block, Map<String, String> environment, List<Problem> problems) {
        Optional<List<String>> name = tableName(block, problems);
        String catalogName = block.path("catalog_name").asText();
        Optional<JsonNode> catalogBlock = block.path("catalog").isObject() ? Optional.of(block.path("catalog")) : Optional.empty();
        String where = "catalog";
        if (catalogBlock.isEmpty()) {
            catalogBlock = pyicebergCatalog(catalogName, environment, problems);
            where = "catalog_name";
        }
        if (catalogBlock.isEmpty() || name.isEmpty()) {
            return Optional.empty();
        }
        Optional<Catalog> catalog = catalog(catalogBlock.get(), where, problems);
        if (catalog.isEmpty()) {
            return Optional.empty();
        }
        List<String> parts = name.get();
        return Optional.of(new IcebergSettings(catalogName, parts.subList(0, parts.size() - 1), parts.getLast(), catalog.get().jdbcUrl,
                catalog.get().user, catalog.get().password, catalog.get().warehouse));
    }

    private record Catalog(String jdbcUrl, Optional<String> user, Optional<String> password, Path warehouse) {}

    private static Optional<List<String>> tableName(JsonNode block, List<Problem> problems) {
        List<String> parts = List.of(block.path("table_name").asText().split("\\.", -1));
        if (parts.size() < 2 || parts.stream().anyMatch(String::isBlank)) {
            problems.add(new Problem("table_name", ErrorCode.USER_CONFIG_INVALID, "`" + block.path("table_name").asText()
                    + "` is not <namespace>.<table>; name the table with its namespace, e.g. default.city_events"));
            return Optional.empty();
        }
        return Optional.of(parts);
    }

    private static Optional<Catalog> catalog(JsonNode catalog, String where, List<Problem> problems) {
        String key = where.equals("catalog") ? "catalog." : "catalog_name: the catalog's ";
        String uri = catalog.path("uri").asText("");
        String warehouse = catalog.path("warehouse").asText("");
        Optional<String> user = text(catalog.path("user"));
        Optional<String> password = text(catalog.path("password"));
        Optional<String> jdbcUrl = Optional.empty();
        if (uri.isEmpty()) {
            problems.add(new Problem(where.equals("catalog") ? "catalog.uri" : "catalog_name", ErrorCode.USER_ICEBERG_CATALOG_INVALID,
                    key + "uri is missing; give the catalog database, e.g. sqlite:////var/lib/iceberg/catalog.db or "
                            + "jdbc:postgresql://127.0.0.1:5432/iceberg"));
        } else {
            jdbcUrl = jdbcUrl(uri, problems, where.equals("catalog") ? "catalog.uri" : "catalog_name");
            if (jdbcUrl.isPresent() && uri.startsWith("postgres")) {
                // A SQLAlchemy URL carries its credentials; JDBC takes them apart.
                URI parsed = URI.create(uri.replaceFirst("^[a-z0-9+]+://", "x://"));
                if (parsed.getRawUserInfo() != null && user.isEmpty()) {
                    String[] info = parsed.getUserInfo().split(":", 2);
                    user = Optional.of(info[0]);
                    password = info.length > 1 ? Optional.of(info[1]) : password;
                }
            }
        }
        Optional<Path> directory = Optional.empty();
        String warehouseKey = where.equals("catalog") ? "catalog.warehouse" : "catalog_name";
        if (warehouse.isEmpty()) {
            problems.add(new Problem(warehouseKey, ErrorCode.USER_ICEBERG_CATALOG_INVALID,
                    key + "warehouse is missing; give the directory tables are written under, e.g. file:///var/lib/iceberg/warehouse"));
        } else if (warehouse.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*") && !warehouse.startsWith("file:")) {
            problems.add(new Problem(warehouseKey, ErrorCode.USER_CONFIG_UNSUPPORTED, key + "warehouse `" + warehouse
                    + "` is not on the local file system; this version writes Iceberg tables to a local directory (file:///... or /...)"));
        } else if (!warehouse.startsWith("file:") && !Path.of(warehouse).isAbsolute()) {
            problems.add(new Problem(warehouseKey, ErrorCode.USER_ICEBERG_CATALOG_INVALID,
                    key + "warehouse `" + warehouse + "` is relative; give an absolute directory (file:///... or /...)"));
        } else {
            directory = Optional.of(LocalFileIO.path(warehouse));
        }
        if (jdbcUrl.isEmpty() || directory.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Catalog(jdbcUrl.get(), user, password, directory.get()));
    }

    /** The catalog database's JDBC URL: as given, or converted from the SQLAlchemy URL pyiceberg takes. */
    private static Optional<String> jdbcUrl(String uri, List<Problem> problems, String key) {
        String lower = uri.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:sqlite:") || lower.startsWith("jdbc:postgresql:")) {
            return Optional.of(uri);
        }
        if (lower.startsWith("sqlite:///")) {
            // sqlite:///relative.db, sqlite:////absolute.db
            return Optional.of("jdbc:sqlite:" + uri.substring("sqlite:///".length()));
        }
        if (lower.matches("^postgres(ql)?(\\+[a-z0-9]+)?://.*")) {
            URI parsed = URI.create(uri.replaceFirst("^[a-zA-Z0-9+]+://", "x://"));
            String port = parsed.getPort() < 0 ? "" : ":" + parsed.getPort();
            String query = parsed.getRawQuery() == null ? "" : "?" + parsed.getRawQuery();
            return Optional.of("jdbc:postgresql://" + parsed.getHost() + port + parsed.getRawPath() + query);
        }
        problems.add(new Problem(key, ErrorCode.USER_ICEBERG_CATALOG_INVALID, "the catalog uri `" + redacted(uri)
                + "` is neither SQLite nor Postgres; use sqlite:////path/catalog.db, postgresql://user@host:5432/db or a "
                + "jdbc:sqlite:/jdbc:postgresql: URL"));
        return Optional.empty();
    }

    /** A URI with its password (user:password@) hidden, for errors. */
    static String redacted(String uri) {
        return uri.replaceFirst("://([^:/@]*):[^@/]*@", "://$1:***@");
    }

    /** The catalog pyiceberg would load under this name: its environment variables first, then .pyiceberg.yaml. */
    private static Optional<JsonNode> pyicebergCatalog(String name, Map<String, String> environment, List<Problem> problems) {
        String prefix = "PYICEBERG_CATALOG__" + name.toUpperCase(Locale.ROOT).replace('-', '_') + "__";
        com.fasterxml.jackson.databind.node.ObjectNode fromEnv = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        environment.forEach((variable, value) -> {
            if (variable.startsWith(prefix)) {
                fromEnv.put(variable.substring(prefix.length()).toLowerCase(Locale.ROOT), value);
            }
        });
        Path file = Path.of(Optional.ofNullable(environment.get("PYICEBERG_HOME")).orElse(environment.getOrDefault("HOME",
                System.getProperty("user.home"))), ".pyiceberg.yaml");
        JsonNode fromFile = com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        if (Files.isRegularFile(file)) {
            try {
                fromFile = new YAMLMapper().readTree(file.toFile()).path("catalog").path(name);
            } catch (IOException e) {
                problems.add(new Problem("catalog_name", ErrorCode.USER_ICEBERG_CATALOG_INVALID,
                        "cannot read " + file + ": " + e.getMessage()));
                return Optional.empty();
            }
        }
        if (fromEnv.isEmpty() && !fromFile.isObject()) {
            problems.add(new Problem("catalog_name", ErrorCode.USER_ICEBERG_CATALOG_INVALID, "no catalog named `" + name
                    + "`: add a catalog block (uri, warehouse) to " + BLOCK + ", or define it in " + file + " or in " + prefix
                    + "URI and " + prefix + "WAREHOUSE as for SQLFlow"));
            return Optional.empty();
        }
        com.fasterxml.jackson.databind.node.ObjectNode merged = fromFile.isObject()
                ? ((com.fasterxml.jackson.databind.node.ObjectNode) fromFile).deepCopy()
                : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        merged.setAll(fromEnv);
        return Optional.of(merged);
    }

    private static Optional<String> text(JsonNode node) {
        return node.isTextual() && !node.asText().isEmpty() ? Optional.of(node.asText()) : Optional.empty();
    }

    @Override
    public String toString() {
        return "catalog=" + catalogName + " table=" + String.join(".", namespace) + "." + table + " uri=" + redacted(jdbcUrl)
                + " warehouse=" + warehouse;
    }
}
