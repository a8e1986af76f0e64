// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * A Postgres connection string as SQLFlow's users write it, turned into a pgjdbc URL and properties. Accepts
 * libpq's URI form ({@code postgres://user:pass@host:5432/db?sslmode=require}, {@code postgresql://...}), libpq's
 * key=value form ({@code host=localhost port=5432 dbname=db user=u password='p w'}) and a {@code jdbc:postgresql:}
 * URL as it is. The password travels only in {@link #properties()}; {@link #description()} is safe to log.
 *
 * @param jdbcUrl the URL without credentials (a jdbc: URL given by the user is kept as written)
 * @param properties user, password and the connection parameters, in pgjdbc's names
 * @param description host, port, database and user, for logs and errors
 */
public record PostgresDsn(String jdbcUrl, Properties properties, String description) {
    /** libpq parameter names whose pgjdbc name differs; any other parameter passes through unchanged. */
    private static final Map<String, String> PGJDBC_NAMES = Map.of(
            "connect_timeout", "connectTimeout",
            "application_name", "ApplicationName",
            "target_session_attrs", "targetServerType",
            "keepalives", "tcpKeepAlive");

    public PostgresDsn {
        requireNonNull(jdbcUrl, "jdbcUrl is null");
        requireNonNull(properties, "properties is null");
        requireNonNull(description, "description is null");
    }

    /**
     * @param where the config key holding the DSN, for errors ({@code pipeline.sink.postgres.dsn})
     * @throws MallardException {@code user.config.invalid} when the text is none of the accepted forms
     */
    public static PostgresDsn parse(String dsn, String where) {
        requireNonNull(dsn, "dsn is null");
        String text = dsn.strip();
        if (text.startsWith("jdbc:postgresql:")) {
            return new PostgresDsn(text, new Properties(), "the jdbc:postgresql: URL of " + where);
        }
        if (text.startsWith("postgres://") || text.startsWith("postgresql://")) {
            return fromUri(text, where);
        }
        if (text.contains("=")) {
            return fromKeyValues(text, where);
        }
        throw invalid(where, "is not a postgres:// or postgresql:// URI, a key=value list (host=... dbname=...)"
                + " or a jdbc:postgresql: URL");
    }

    private static PostgresDsn fromUri(String text, String where) {
        String rest = text.substring(text.indexOf("://") + 3);
        String query = "";
        int questionMark = rest.indexOf('?');
        if (questionMark >= 0) {
            query = rest.substring(questionMark + 1);
            rest = rest.substring(0, questionMark);
        }
        String database = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            database = decode(rest.substring(slash + 1), where);
            rest = rest.substring(0, slash);
        }
        Map<String, String> params = new LinkedHashMap<>();
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            params.put("user", decode(colon >= 0 ? userInfo.substring(0, colon) : userInfo, where));
            if (colon >= 0) {
                params.put("password", decode(userInfo.substring(colon + 1), where));
            }
        }
        if (!query.isEmpty()) {
            for (String pair : query.split("&")) {
                int equals = pair.indexOf('=');
                if (equals <= 0) {
                    throw invalid(where, "has a query parameter without a value: " + pair);
                }
                params.put(decode(pair.substring(0, equals), where), decode(pair.substring(equals + 1), where));
            }
        }
        String hosts = rest.isEmpty() ? params.getOrDefault("host", "localhost") : rest;
        if (params.containsKey("dbname")) {
            database = params.get("dbname");
        }
        return build(hosts, params.remove("port"), database, params, where);
    }

    private static PostgresDsn fromKeyValues(String text, String where) {
        Map<String, String> params = new LinkedHashMap<>();
        int i = 0;
        while (i < text.length()) {
            while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i >= text.length()) {
                break;
            }
            int equals = text.indexOf('=', i);
            if (equals < 0) {
                throw invalid(where, "has a word without '=' at character " + (i + 1) + " (key=value form: host=... dbname=...)");
            }
            String key = text.substring(i, equals).strip();
            i = equals + 1;
            while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            StringBuilder value = new StringBuilder();
            if (i < text.length() && text.charAt(i) == '\'') {
                i++;
                boolean closed = false;
                while (i < text.length()) {
                    char c = text.charAt(i++);
                    if (c == '\\' && i < text.length()) {
                        value.append(text.charAt(i++));
                    } else if (c == '\'') {
                        closed = true;
                        break;
                    } else {
                        value.append(c);
                    }
                }
                if (!closed) {
                    throw invalid(where, "has an unterminated quoted value for " + key);
                }
            } else {
                while (i < text.length() && !Character.isWhitespace(text.charAt(i))) {
                    char c = text.charAt(i++);
                    if (c == '\\' && i < text.length()) {
                        c = text.charAt(i++);
                    }
                    value.append(c);
                }
            }
            params.put(key, value.toString());
        }
        String hosts = params.getOrDefault("host", params.getOrDefault("hostaddr", "localhost"));
        params.remove("host");
        params.remove("hostaddr");
        return build(hosts, params.remove("port"), params.getOrDefault("dbname", ""), params, where);
    }

    private static PostgresDsn build(String hosts, String port, String database, Map<String, String> params, String where) {
        params.remove("host");
        params.remove("dbname");
        if (hosts.startsWith("/")) {
            throw invalid(where, "names a Unix socket directory (" + hosts + "); give a TCP host instead, e.g. host=127.0.0.1");
        }
        StringBuilder url = new StringBuilder("jdbc:postgresql://");
        String[] each = hosts.split(",");
        for (int n = 0; n < each.length; n++) {
            String host = each[n].strip();
            if (host.isEmpty()) {
                throw invalid(where, "has an empty host name");
            }
            url.append(n == 0 ? "" : ",").append(host);
            if (port != null && !host.contains(":") && !host.endsWith("]")) {
                url.append(':').append(port);
            }
        }
        if (database.contains("/") || database.contains("?")) {
            throw invalid(where, "has a database name with '/' or '?': " + database);
        }
        url.append('/').append(database);
        Properties properties = new Properties();
        params.forEach((key, value) -> properties.setProperty(PGJDBC_NAMES.getOrDefault(key, key), value));
        if ("0".equals(properties.getProperty("tcpKeepAlive"))) {
            properties.setProperty("tcpKeepAlive", "false");
        } else if ("1".equals(properties.getProperty("tcpKeepAlive"))) {
            properties.setProperty("tcpKeepAlive", "true");
        }
        String description = url.substring("jdbc:postgresql://".length())
                + (properties.containsKey("user") ? " user=" + properties.getProperty("user") : "");
        return new PostgresDsn(url.toString(), properties, description);
    }

    private static String decode(String text, String where) {
        try {
            return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid(where, "has a malformed %-escape");
        }
    }

    private static MallardException invalid(String where, String problem) {
        // The DSN itself is never repeated: it may hold a password.
        return new MallardException(ErrorCode.USER_CONFIG_INVALID, where + " " + problem);
    }

    @Override
    public String toString() {
        return "PostgresDsn[" + description + "]";
    }
}
