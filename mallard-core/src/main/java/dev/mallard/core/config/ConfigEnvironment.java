// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a configuration template can read: every {@code MALLARD_*} and {@code SQLFLOW_*} environment
 * variable under its own name, {@code PORT} when it is set (the port a PaaS such as Heroku or Cloud Run
 * gives a process), plus {@code STATIC_ROOT} and {@code SQL_RESULTS_CACHE_DIR}. Beside them, not readable by a
 * template, the {@code PYICEBERG_*} variables: where the Iceberg sink finds a catalog by name, as pyiceberg does.
 */
public record ConfigEnvironment(Map<String, String> variables, Map<String, String> pyiceberg) {
    public static final String DEFAULT_STATIC_ROOT = "/tmp/mallard/static";
    public static final String DEFAULT_RESULTS_CACHE_DIR = "/tmp/mallard/resultscache";
    /** The PaaS convention's port variable, read as is. */
    public static final String PORT = "PORT";

    public ConfigEnvironment {
        variables = Map.copyOf(requireNonNull(variables, "variables is null"));
        pyiceberg = Map.copyOf(requireNonNull(pyiceberg, "pyiceberg is null"));
    }

    public ConfigEnvironment(Map<String, String> variables) {
        this(variables, Map.of());
    }

    public static ConfigEnvironment fromSystem() {
        return from(System.getenv());
    }

    /** Picks the template variables out of a process environment. */
    public static ConfigEnvironment from(Map<String, String> env) {
        Map<String, String> vars = new TreeMap<>();
        Map<String, String> pyiceberg = new TreeMap<>();
        env.forEach((name, value) -> {
            if (isSupplied(name) || name.equals(PORT)) {
                vars.put(name, value);
            } else if (name.startsWith("PYICEBERG_")) {
                pyiceberg.put(name, value);
            }
        });
        vars.put("STATIC_ROOT", first(env, DEFAULT_STATIC_ROOT, "MALLARD_STATIC_ROOT", "SQLFLOW_STATIC_ROOT"));
        vars.put("SQL_RESULTS_CACHE_DIR", first(env, DEFAULT_RESULTS_CACHE_DIR,
                "MALLARD_SQL_RESULTS_CACHE_DIR", "SQLFLOW_SQL_RESULTS_CACHE_DIR"));
        return new ConfigEnvironment(vars, pyiceberg);
    }

    /** Names a user sets in the environment (and so may misspell). */
    static boolean isSupplied(String name) {
        return name.startsWith("MALLARD_") || name.startsWith("SQLFLOW_");
    }

    public String staticRoot() {
        return variables.get("STATIC_ROOT");
    }

    public String resultsCacheDir() {
        return variables.getOrDefault("SQL_RESULTS_CACHE_DIR", DEFAULT_RESULTS_CACHE_DIR);
    }

    public Map<String, Object> asTemplateContext() {
        return new LinkedHashMap<>(variables);
    }

    private static String first(Map<String, String> env, String fallback, String... names) {
        for (String name : names) {
            String value = env.get(name);
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        return fallback;
    }
}
