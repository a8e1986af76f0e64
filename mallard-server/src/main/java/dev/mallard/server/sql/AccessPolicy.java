package dev.mallard.server.sql;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.session.Session;
import dev.mallard.server.views.ServedViews;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

/**
 * Decides whether a SQL text may run under the server's access mode. READ_ONLY asks DuckDB's own parser: {@code
 * json_serialize_sql} serialises only SELECT statements (set operations, CTEs, subqueries included) and reports
 * an error for any other kind, so a text it serialises is made of queries alone.
 */
public final class AccessPolicy {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final AccessMode mode;

    public AccessPolicy(AccessMode mode) {
        this.mode = requireNonNull(mode, "mode is null");
        if (!mode.available()) {
            throw new IllegalArgumentException("access mode " + mode + " is not available");
        }
    }

    public AccessMode mode() {
        return mode;
    }

    /**
     * @throws MallardException {@code user.access.denied} when the mode refuses the text, {@code user.sql.invalid}
     *     when it does not parse
     */
    public void check(Session session, String sql) {
        requireNonNull(sql, "sql is null");
        if (mode == AccessMode.COMPLETE) {
            return;
        }
        if (ServedViews.changesViews(sql)) {
            // The view statements are not DuckDB's, and dbsp_create_view/dbsp_drop_view are functions a SELECT may call.
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is READ_ONLY: it does not create, drop, refresh or"
                    + " reconfigure materialized views or track tables (reading them, dbsp_query, dbsp_changes, dbsp_stats and dbsp_check work);"
                    + " connect to a COMPLETE server to change them");
        }
        JsonNode tree = parse(session, sql);
        if (tree.path("error").asBoolean(false)) {
            String type = tree.path("error_type").asText("");
            String message = tree.path("error_message").asText("DuckDB could not serialise the statement");
            if (type.equals("parser")) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, message);
            }
            throw refused();
        }
        if (!tree.path("statements").isArray() || tree.path("statements").isEmpty()) {
            throw refused();
        }
    }

    private static MallardException refused() {
        return new MallardException(ErrorCode.USER_ACCESS_DENIED,
                "this server is READ_ONLY: it runs queries only (SELECT, set operations, CTEs), and DuckDB's parser"
                        + " found another kind of statement; connect to a COMPLETE server to change data or settings");
    }

    private static JsonNode parse(Session session, String sql) {
        String json = session.sql(connection -> {
            try (PreparedStatement statement = connection.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)")) {
                statement.setString(1, sql);
                try (ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    return rs.getString(1);
                }
            }
        });
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "json_serialize_sql returned unreadable JSON: " + e.getMessage(), e);
        }
    }
}
