// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Infers DuckDB column types from a batch of JSON messages, the way handlers.InferredMemBatch needs them.
 *
 * <ul>
 *   <li>The columns and their order are the top-level keys of the first message; a top-level key first seen
 *       later is dropped (see {@link #droppedTopLevelKeys()}) and its values are not looked at.
 *   <li>Nested object fields are the union over the batch, in order of first appearance.
 *   <li>Types join over the batch: null joins anything, BIGINT &lt; HUGEINT &lt; DOUBLE, lists join their
 *       elements, objects join field by field. Any other pair is a conflict and fails the batch. The join is
 *       commutative and associative, so neither the types nor whether a conflict exists depend on the order
 *       of the messages (bar the column set, which follows the first message).
 *   <li>A value that was only ever null, the element of lists that were always empty and an object that
 *       never had a key become {@code JSON}.
 * </ul>
 *
 * <p>Reads each message once with a streaming parser and keeps one mutable type tree per batch, so a batch
 * of same-shaped messages allocates little beyond the parser. Not thread-safe; after an exception the
 * instance must be {@link #reset()} before the next batch.
 */
public final class SchemaInference {
    // Kinds, ordered so that the numeric ones widen by taking the larger.
    private static final byte NULL = 0;
    private static final byte BOOLEAN = 1;
    private static final byte BIGINT = 2;
    private static final byte HUGEINT = 3;
    private static final byte DOUBLE = 4;
    private static final byte VARCHAR = 5;
    private static final byte LIST = 6;
    private static final byte STRUCT = 7;

    private static final String LIST_ELEMENT = "[]";
    // Nineteen digits can exceed int64; eighteen (plus a sign) cannot, which spares parsing the common case.
    private static final int SURELY_INT64_CHARS = 18;
    private static final int HUGEINT_BITS = 127;

    private final JsonFactory factory = JsonFactory.builder().build();
    private final Set<String> dropped = new LinkedHashSet<>();
    private Node top;
    private String where;
    private String[] path = new String[16];
    private int depth;

    public SchemaInference() {
        reset();
    }

    /**
     * Adds one message's value. Blank values are skipped.
     *
     * @param where the message's position as a user reads it, e.g. {@code line 7} or {@code topic[0]@12}
     * @throws MallardException {@link ErrorCode#USER_HANDLER_PARSE_FAILED} when the message is not a JSON
     *     object or a value's type cannot be joined with what earlier messages had at the same place
     */
    public void add(byte[] value, String where) {
        requireNonNull(value, "value is null");
        this.where = requireNonNull(where, "where is null");
        if (RawJson.isBlank(value)) {
            return;
        }
        depth = 0;
        try (JsonParser parser = factory.createParser(value)) {
            JsonToken token = parser.nextToken();
            if (token != JsonToken.START_OBJECT) {
                throw fail(where + ": the message is a JSON " + tokenKind(token)
                        + ", not an object; each message must be one JSON object");
            }
            boolean first = top == null;
            if (first) {
                top = new Node();
                top.become(STRUCT, where);
            }
            readTopLevel(parser, first);
            JsonToken trailing = parser.nextToken();
            if (trailing != null) {
                throw fail(where + ": the message has more after its JSON object; each message must be one JSON object");
            }
        } catch (StreamReadException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_PARSE_FAILED,
                    where + ": the message is not valid JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            // The parser reads a byte array, so this is a parser failure rather than I/O.
            throw new MallardException(ErrorCode.USER_HANDLER_PARSE_FAILED,
                    where + ": the message could not be read as JSON: " + e.getMessage(), e);
        }
    }

    /** The inferred columns: the first message's top-level keys, in its order, with their joined types. */
    public List<Column> columns() {
        if (top == null) {
            return List.of();
        }
        List<Column> columns = new ArrayList<>(top.fields.size());
        StringBuilder type = new StringBuilder();
        for (Map.Entry<String, Node> field : top.fields.entrySet()) {
            type.setLength(0);
            field.getValue().render(type);
            columns.add(new Column(field.getKey(), type.toString()));
        }
        return List.copyOf(columns);
    }

    /** Top-level keys that later messages had and the first did not, in order of first appearance. */
    public Set<String> droppedTopLevelKeys() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(dropped));
    }

    /** Forgets the batch so the instance can infer the next one. */
    public void reset() {
        top = null;
        dropped.clear();
        depth = 0;
        where = null;
    }

    private void readTopLevel(JsonParser parser, boolean first) throws IOException {
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken token = parser.nextToken();
            Node column = top.fields.get(name);
            if (column == null) {
                if (!first) {
                    dropped.add(name);
                    parser.skipChildren();
                    continue;
                }
                column = new Node();
                top.fields.put(name, column);
            }
            push(name);
            read(parser, token, column);
            depth--;
        }
    }

    private void read(JsonParser parser, JsonToken token, Node node) throws IOException {
        switch (token) {
            case VALUE_NULL -> {
                // null joins anything: the type stays what the other messages make it
            }
            case VALUE_TRUE, VALUE_FALSE -> scalar(node, BOOLEAN);
            case VALUE_NUMBER_INT -> scalar(node, integerKind(parser));
            case VALUE_NUMBER_FLOAT -> scalar(node, DOUBLE);
            case VALUE_STRING -> scalar(node, VARCHAR);
            case START_ARRAY -> {
                container(node, LIST);
                push(LIST_ELEMENT);
                JsonToken element;
                while ((element = parser.nextToken()) != JsonToken.END_ARRAY) {
                    read(parser, element, node.element);
                }
                depth--;
            }
            case START_OBJECT -> {
                container(node, STRUCT);
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String name = parser.currentName();
                    Node field = node.fields.get(name);
                    push(name);
                    if (field == null) {
                        requireDistinctIgnoringCase(node, name);
                        field = new Node();
                        node.fields.put(name, field);
                    }
                    read(parser, parser.nextToken(), field);
                    depth--;
                }
            }
            default -> throw new IllegalStateException("unexpected JSON token " + token);
        }
    }

    // DuckDB matches struct field names without regard to case, so it rejects STRUCT("a" T, "A" T).
    private void requireDistinctIgnoringCase(Node struct, String name) {
        for (String existing : struct.fields.keySet()) {
            if (existing.equalsIgnoreCase(name)) {
                String field = pathText();
                throw fail(where + ": field '" + field + "' differs from the field '" + existing
                        + "' of earlier messages only in case, and DuckDB's struct field names ignore case. Use one "
                        + "spelling of '" + field + "' in every message, or declare the table and use "
                        + "handlers.StructuredBatch.");
            }
        }
    }

    private static byte integerKind(JsonParser parser) throws IOException {
        if (parser.getTextLength() <= SURELY_INT64_CHARS) {
            return BIGINT;
        }
        JsonParser.NumberType type = parser.getNumberType();
        if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
            return BIGINT;
        }
        BigInteger value = parser.getBigIntegerValue();
        // Past HUGEINT only a double can hold the magnitude.
        return value.bitLength() <= HUGEINT_BITS ? HUGEINT : DOUBLE;
    }

    private void scalar(Node node, byte kind) {
        if (node.kind == kind) {
            return;
        }
        if (node.kind == NULL) {
            node.become(kind, where);
        } else if (isNumeric(node.kind) && isNumeric(kind)) {
            node.kind = (byte) Math.max(node.kind, kind);
        } else {
            throw conflict(node, kind);
        }
    }

    private void container(Node node, byte kind) {
        if (node.kind == NULL) {
            node.become(kind, where);
        } else if (node.kind != kind) {
            throw conflict(node, kind);
        }
    }

    private static boolean isNumeric(byte kind) {
        return kind == BIGINT || kind == HUGEINT || kind == DOUBLE;
    }

    private MallardException conflict(Node earlier, byte incoming) {
        String field = pathText();
        return fail(where + ": field '" + field + "' is " + kindText(incoming) + " here but was "
                + kindText(earlier.kind) + " in earlier messages (first at " + earlier.since
                + "). A field must keep one type across a batch: make the type of '" + field
                + "' consistent in every message, or declare the table and use handlers.StructuredBatch.");
    }

    private static MallardException fail(String message) {
        return new MallardException(ErrorCode.USER_HANDLER_PARSE_FAILED, message);
    }

    private static String kindText(byte kind) {
        return switch (kind) {
            case BOOLEAN -> "BOOLEAN";
            case BIGINT -> "BIGINT";
            case HUGEINT -> "HUGEINT";
            case DOUBLE -> "DOUBLE";
            case VARCHAR -> "VARCHAR";
            case LIST -> "a list";
            case STRUCT -> "an object";
            default -> "null";
        };
    }

    private static String tokenKind(JsonToken token) {
        if (token == null) {
            return "nothing";
        }
        return switch (token) {
            case START_ARRAY -> "array";
            case VALUE_STRING -> "string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            default -> token.name();
        };
    }

    private void push(String segment) {
        if (depth == path.length) {
            path = Arrays.copyOf(path, depth * 2);
        }
        path[depth++] = segment;
    }

    private String pathText() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            if (i > 0 && !LIST_ELEMENT.equals(path[i])) {
                text.append('.');
            }
            text.append(path[i]);
        }
        return text.toString();
    }

    /** The type joined so far at one place of the batch's documents. */
    private static final class Node {
        byte kind = NULL;
        String since;
        Node element;
        Map<String, Node> fields;

        void become(byte newKind, String where) {
            kind = newKind;
            since = where;
            if (newKind == LIST) {
                element = new Node();
            } else if (newKind == STRUCT) {
                fields = new LinkedHashMap<>();
            }
        }

        void render(StringBuilder out) {
            switch (kind) {
                case BOOLEAN -> out.append("BOOLEAN");
                case BIGINT -> out.append("BIGINT");
                case HUGEINT -> out.append("HUGEINT");
                case DOUBLE -> out.append("DOUBLE");
                case VARCHAR -> out.append("VARCHAR");
                case LIST -> {
                    element.render(out);
                    out.append("[]");
                }
                case STRUCT -> {
                    if (fields.isEmpty()) {
                        out.append("JSON");
                        return;
                    }
                    out.append("STRUCT(");
                    boolean firstField = true;
                    for (Map.Entry<String, Node> field : fields.entrySet()) {
                        if (!firstField) {
                            out.append(", ");
                        }
                        firstField = false;
                        out.append(SqlText.identifier(field.getKey())).append(' ');
                        field.getValue().render(out);
                    }
                    out.append(')');
                }
                default -> out.append("JSON");
            }
        }
    }
}
