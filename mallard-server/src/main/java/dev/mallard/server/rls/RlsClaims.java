// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The row-level security claims of a token, in DazzleDuck's names: {@code x-dd-access}, the legacy
 * {@code x-dd-table}, {@code x-dd-path}, {@code x-dd-function}, {@code x-dd-filter}, {@code database},
 * {@code schema}, and Mallard's {@code x-dd-variables}. A claim may arrive as JSON (a login body) or as text
 * holding JSON (a header or connection property).
 *
 * @param grants the datasources granted, {@code x-dd-access} when given, else the legacy claims
 * @param database the catalog that bare names in grants and queries are read in, when given
 * @param schema the schema that bare names in grants and queries are read in, when given
 * @param variables what {@code SET VARIABLE} sets on the session, readable with {@code getvariable('name')}
 * @param fromAccess whether the grants came from {@code x-dd-access} (RESTRICTED takes exactly one entry there)
 */
public record RlsClaims(List<AccessGrant> grants, Optional<String> database, Optional<String> schema, Map<String, String> variables,
        boolean fromAccess) {
    public static final String ACCESS = "x-dd-access";
    public static final String TABLE = "x-dd-table";
    public static final String PATH = "x-dd-path";
    public static final String FUNCTION = "x-dd-function";
    public static final String FILTER = "x-dd-filter";
    public static final String DATABASE = "database";
    public static final String SCHEMA = "schema";
    public static final String VARIABLES = "x-dd-variables";
    /** Every claim this class reads: what a user's configuration decides a login may give. */
    public static final Set<String> NAMES = Set.of(ACCESS, TABLE, PATH, FUNCTION, FILTER, DATABASE, SCHEMA, VARIABLES);

    static final int MAX_VARIABLES = 64;
    static final int MAX_VARIABLE_CHARS = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();

    public RlsClaims {
        grants = List.copyOf(grants);
        requireNonNull(database, "database is null");
        requireNonNull(schema, "schema is null");
        variables = Map.copyOf(variables);
    }

    /**
     * @throws MallardException {@code user.access.claims_invalid} when a claim is malformed
     */
    public static RlsClaims parse(Map<String, Object> claims) {
        requireNonNull(claims, "claims is null");
        List<AccessGrant> grants = new ArrayList<>();
        Optional<JsonNode> access = json(claims, ACCESS);
        if (access.isPresent()) {
            grants.addAll(accessEntries(access.get()));
        } else {
            Optional<String> filter = text(claims, FILTER);
            text(claims, TABLE).ifPresent(name -> grants.add(new AccessGrant(AccessGrant.Kind.TABLE, name, filterOf(filter))));
            text(claims, PATH).ifPresent(name -> grants.add(new AccessGrant(AccessGrant.Kind.PATH, name, filterOf(filter))));
            text(claims, FUNCTION).ifPresent(name -> grants.add(new AccessGrant(AccessGrant.Kind.FUNCTION, name, filterOf(filter))));
            if (filter.isPresent() && grants.isEmpty()) {
                throw invalid(FILTER + " names no datasource: give " + TABLE + " (or " + PATH + ", " + FUNCTION + ") with it, or use " + ACCESS);
            }
        }
        return new RlsClaims(grants, text(claims, DATABASE), text(claims, SCHEMA), variables(claims), access.isPresent());
    }

    /** Only the {@code x-dd-variables} of the claims, checked; the others are left unread. */
    public static RlsClaims variablesOnly(Map<String, Object> claims) {
        return new RlsClaims(List.of(), Optional.empty(), Optional.empty(), variables(requireNonNull(claims, "claims is null")), false);
    }

    /** Whether the claims carry anything row-level security reads (a token without any reads nothing under RLS). */
    public static boolean mentionsAny(Map<String, Object> claims) {
        return claims.keySet().stream().anyMatch(NAMES::contains);
    }

    private static List<AccessGrant> accessEntries(JsonNode access) {
        if (!access.isArray() || access.isEmpty()) {
            throw invalid(ACCESS + " must be a non-empty JSON array of [type, name, projection, filter] entries, such as"
                    + " [[\"table\",\"orders\",\"*\",\"tenant_id = 'abc'\"]]");
        }
        List<AccessGrant> grants = new ArrayList<>();
        for (JsonNode entry : access) {
            if (!entry.isArray() || entry.size() != 4 || !allText(entry)) {
                throw invalid(ACCESS + " entry " + entry + " is not [type, name, projection, filter] of four strings");
            }
            AccessGrant.Kind kind = AccessGrant.Kind.of(entry.get(0).asText()).orElseThrow(() -> invalid(ACCESS + " entry " + entry
                    + " has type '" + entry.get(0).asText() + "'; use table, path or function"));
            String name = entry.get(1).asText().strip();
            if (name.isEmpty()) {
                throw invalid(ACCESS + " entry " + entry + " names no datasource");
            }
            String projection = entry.get(2).asText().strip();
            if (projection.isEmpty()) {
                throw invalid(ACCESS + " entry " + entry + " has an empty projection; give * for every column, or the columns it exposes"
                        + " such as \"id, amount\"");
            }
            String filter = entry.get(3).asText().strip();
            if (filter.isEmpty()) {
                throw invalid(ACCESS + " entry " + entry + " has an empty filter; give a SQL expression, or true for every row");
            }
            grants.add(new AccessGrant(kind, name, filterOf(Optional.of(filter)), projection.equals("*") ? Optional.empty() : Optional.of(projection)));
        }
        return grants;
    }

    private static boolean allText(JsonNode entry) {
        for (JsonNode value : entry) {
            if (!value.isTextual()) {
                return false;
            }
        }
        return true;
    }

    /** {@code true} (any case) reads every row: no filter. */
    private static Optional<String> filterOf(Optional<String> filter) {
        return filter.map(String::strip).filter(text -> !text.isEmpty() && !text.equalsIgnoreCase("true"));
    }

    private static Map<String, String> variables(Map<String, Object> claims) {
        Optional<JsonNode> given = json(claims, VARIABLES);
        if (given.isEmpty()) {
            return Map.of();
        }
        JsonNode object = given.get();
        if (!object.isObject()) {
            throw invalid(VARIABLES + " must be a JSON object of strings, such as {\"tenant\":\"abc\"}");
        }
        if (object.size() > MAX_VARIABLES) {
            throw invalid(VARIABLES + " holds " + object.size() + " variables; at most " + MAX_VARIABLES + " are allowed");
        }
        Map<String, String> variables = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> entry : object.properties()) {
            String name = entry.getKey();
            if (name.isEmpty() || name.length() > 256 || hasControl(name)) {
                throw invalid(VARIABLES + " has a variable name that is empty, longer than 256 characters or holds control characters");
            }
            if (!entry.getValue().isTextual()) {
                throw invalid(VARIABLES + " variable '" + name + "' is not a string; give every value as a JSON string");
            }
            String value = entry.getValue().asText();
            if (value.length() > MAX_VARIABLE_CHARS) {
                throw invalid(VARIABLES + " variable '" + name + "' is " + value.length() + " characters long; at most "
                        + MAX_VARIABLE_CHARS + " are allowed");
            }
            if (hasControl(value)) {
                throw invalid(VARIABLES + " variable '" + name + "' holds control characters");
            }
            variables.put(name, value);
        }
        return variables;
    }

    private static boolean hasControl(String text) {
        return text.chars().anyMatch(Character::isISOControl);
    }

    /** A claim as JSON: given as JSON, or as text that holds JSON. */
    private static Optional<JsonNode> json(Map<String, Object> claims, String name) {
        Object value = claims.get(name);
        if (value == null) {
            return Optional.empty();
        }
        if (value instanceof String text) {
            if (text.isBlank()) {
                return Optional.empty();
            }
            try {
                return Optional.of(JSON.readTree(text));
            } catch (JsonProcessingException e) {
                throw invalid(name + " is not JSON: " + e.getOriginalMessage());
            }
        }
        return Optional.of(JSON.valueToTree(value));
    }

    private static Optional<String> text(Map<String, Object> claims, String name) {
        Object value = claims.get(name);
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof String text)) {
            throw invalid(name + " must be a string");
        }
        return Optional.of(text.strip()).filter(stripped -> !stripped.isEmpty());
    }

    static MallardException invalid(String message) {
        return new MallardException(ErrorCode.USER_ACCESS_CLAIMS_INVALID, message);
    }
}
