// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.StorageCompatibility;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A serve configuration (SQLFlow's {@code serve} file): the commands that prepare the database and the named
 * datasets answered over HTTP. Read and checked by {@link ServeConfigReader}; see docs/datasets.md.
 */
public record ServeConfig(List<Command> commands, Settings serve) {
    public static final int DEFAULT_PORT = 8080;
    public static final String DEFAULT_HOST = "0.0.0.0";
    public static final int DEFAULT_MAX_ROWS = 10_000;
    /** {@code serve.query_timeout_seconds}: how long a dataset's statement may run before it is interrupted. */
    public static final long DEFAULT_QUERY_TIMEOUT_SECONDS = 30;
    public static final int DEFAULT_CACHE_MAX_MB = 16;

    public ServeConfig {
        commands = List.copyOf(requireNonNull(commands, "commands is null"));
        requireNonNull(serve, "serve is null");
    }

    /** One statement (or several separated by semicolons) run at startup. */
    public record Command(String name, String sql) {
        public Command {
            requireNonNull(name, "name is null");
            requireNonNull(sql, "sql is null");
        }
    }

    /**
     * The {@code serve:} block.
     *
     * @param database the DuckDB file {@code mallard serve} opens, or empty for an in-memory database
     * @param storageCompatibility the format {@code mallard serve} creates that file in ({@code serve.storage_compatibility})
     * @param cacheMaxBytes {@code cache.max_mb} in bytes: the bound of every cached answer together
     * @param clients the bearer tokens that name callers; empty means requests need none
     */
    public record Settings(String host, int port, Optional<String> database, StorageCompatibility storageCompatibility, int maxRows,
            java.time.Duration queryTimeout, long cacheMaxBytes, boolean metrics, List<Client> clients, List<Dataset> datasets) {
        public Settings {
            requireNonNull(host, "host is null");
            requireNonNull(storageCompatibility, "storageCompatibility is null");
            requireNonNull(queryTimeout, "queryTimeout is null");
            requireNonNull(database, "database is null");
            clients = List.copyOf(requireNonNull(clients, "clients is null"));
            datasets = List.copyOf(requireNonNull(datasets, "datasets is null"));
        }

        public Optional<Dataset> dataset(String name) {
            return datasets.stream().filter(dataset -> dataset.name().equals(name)).findFirst();
        }
    }

    /** A caller's bearer token and the name it logs under; the token never appears in logs or {@link #toString()}. */
    public record Client(String clientId, String token) {
        public Client {
            requireNonNull(clientId, "clientId is null");
            requireNonNull(token, "token is null");
        }

        @Override
        public String toString() {
            return "Client[clientId=" + clientId + ", token=***]";
        }
    }

    /** What a request parameter holds. */
    public enum ParamType {
        STRING, INTEGER, TIMESTAMP
    }

    /** A request parameter a dataset's SQL binds as {@code $name}. */
    public record Param(String name, ParamType type, boolean required, Optional<String> defaultValue, OptionalLong min, OptionalLong max,
            String description) {
        public Param {
            requireNonNull(name, "name is null");
            requireNonNull(type, "type is null");
            requireNonNull(defaultValue, "defaultValue is null");
            requireNonNull(min, "min is null");
            requireNonNull(max, "max is null");
            requireNonNull(description, "description is null");
        }
    }

    /** The params that bound a ranged dataset's window, and its width when a request gives no since. */
    public record Range(String since, String until, Duration defaultWidth) {
        public Range {
            requireNonNull(since, "since is null");
            requireNonNull(until, "until is null");
            requireNonNull(defaultWidth, "defaultWidth is null");
        }
    }

    /** One resolution of a dataset: its statement, the widest window it serves, and the bucket its window is rounded to. */
    public record Grain(String name, String sql, Optional<Duration> maxRange, Optional<Duration> bucket) {
        public Grain {
            requireNonNull(name, "name is null");
            requireNonNull(sql, "sql is null");
            requireNonNull(maxRange, "maxRange is null");
            requireNonNull(bucket, "bucket is null");
        }
    }

    /**
     * A named dataset: one statement ({@code sql}) or one per grain ({@code grains}, in the order a request's window
     * picks from: the finest, smallest max_range, first).
     *
     * @param cacheTtl present when the dataset opts into the response cache
     */
    public record Dataset(String name, String description, List<Param> params, Optional<String> sql, Optional<Range> range,
            Map<String, Grain> grains, Optional<Duration> cacheTtl) {
        public Dataset {
            requireNonNull(name, "name is null");
            requireNonNull(description, "description is null");
            params = List.copyOf(requireNonNull(params, "params is null"));
            requireNonNull(sql, "sql is null");
            requireNonNull(range, "range is null");
            grains = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(grains, "grains is null")));
            requireNonNull(cacheTtl, "cacheTtl is null");
        }

        public Optional<Param> param(String param) {
            return params.stream().filter(candidate -> candidate.name().equals(param)).findFirst();
        }

        /** Every statement of the dataset: its sql, or each grain's. */
        public List<String> statements() {
            return sql.map(List::of).orElseGet(() -> grains.values().stream().map(Grain::sql).toList());
        }
    }
}
