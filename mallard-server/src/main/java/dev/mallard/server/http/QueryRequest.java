// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;

/**
 * One statement asked of {@code /v1/query} or {@code /v1/cancel}: its text and the id the client gave it.
 *
 * @param id the statement id (DazzleDuck's {@code id}, a whole number); empty when the client gave none
 */
record QueryRequest(String sql, Optional<Long> id) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> FIELDS = Set.of("query", "id", "descriptor");

    QueryRequest {
        requireNonNull(sql, "sql is null");
        requireNonNull(id, "id is null");
    }

    /** A statement id as the client wrote it: a whole number. */
    static long statementId(String text) {
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "Invalid id parameter: must be a valid number, not '" + text + "'");
        }
    }

    /**
     * A POST body: DazzleDuck's JSON object {@code {"query": "...", "id": N}} when it is one, else the SQL text itself.
     *
     * @param idParam the {@code id} query parameter, used when the body does not give one
     */
    static QueryRequest fromBody(String body, Optional<String> idParam) {
        Optional<Long> fromParam = idParam.map(QueryRequest::statementId);
        if (!isJsonObject(body)) {
            return new QueryRequest(body, fromParam);
        }
        QueryRequest asked = fromJson(body, true);
        return new QueryRequest(asked.sql(), asked.id().or(() -> fromParam));
    }

    /**
     * DazzleDuck's JSON request object. Its {@code descriptor} (a split of a plan) is not served yet.
     *
     * @param queryRequired whether {@code query} must be a non-blank string (it may be empty on {@code /v1/cancel})
     */
    static QueryRequest fromJson(String body, boolean queryRequired) {
        JsonNode node;
        try {
            node = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body is not JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body must be a JSON object {\"query\": \"...\", \"id\": N}");
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "unknown field '" + name + "' in the request body; it takes query, id");
            }
        }
        if (!node.path("descriptor").isMissingNode() && !node.path("descriptor").isNull()) {
            throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, "a request's descriptor (a split of /v1/plan) is not supported yet; send the query");
        }
        JsonNode query = node.path("query");
        if (!query.isMissingNode() && !query.isNull() && !query.isTextual()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body's query must be a string");
        }
        String sql = query.isTextual() ? query.asText() : "";
        if (queryRequired && sql.isBlank()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "Missing required parameter: query; the body's query is empty");
        }
        JsonNode id = node.path("id");
        Optional<Long> statementId;
        if (id.isMissingNode() || id.isNull()) {
            statementId = Optional.empty();
        } else if (id.isIntegralNumber() && id.canConvertToLong()) {
            statementId = Optional.of(id.asLong());
        } else if (id.isTextual()) {
            statementId = Optional.of(statementId(id.asText()));
        } else {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "Invalid id parameter: must be a valid number, not " + id);
        }
        return new QueryRequest(sql, statementId);
    }

    // The wire format of the body (DazzleDuck's JSON object or raw SQL), not the kind of statement: SQL never opens with '{'.
    private static boolean isJsonObject(String body) {
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (!Character.isWhitespace(c)) {
                return c == '{';
            }
        }
        return false;
    }
}
