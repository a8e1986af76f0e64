// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A statement's parse tree with its constants taken out: every {@code CONSTANT} expression becomes a numbered slot,
 * and DuckDB's query locations (which move with a literal's length) are dropped. Texts that differ only in their
 * literals ({@code WHERE id = 4} and {@code WHERE id = 1234}) have one shape, so the rewrite made for one serves
 * them all: the rewriter works on the shape, never seeing a constant, and {@link #fill} puts each text's own
 * constants back into the rewritten tree, slot by slot, on the tree.
 *
 * <p>Constants under a table function stay in the shape as written, since the rewriter reads them (a file
 * reader's path decides whether a {@code path} grant admits it); everything else it reads (names, node types,
 * functions, the tree's structure) is in the shape too, so a shape's rewrite is the rewrite of every text of that shape.
 */
final class StatementShape {
    /** The field that numbers a slot; DuckDB's serialiser names no field so, and a tree holding one is not shaped. */
    static final String SLOT = "__mallard_constant_slot";

    private final ObjectNode masked;
    private final String key;
    private final List<JsonNode> constants;

    private StatementShape(ObjectNode masked, List<JsonNode> constants) {
        this.masked = masked;
        this.key = masked.toString();
        this.constants = List.copyOf(constants);
    }

    /** The shape of one statement of DuckDB's tree ({@code {"node": ..., "named_param_map": ...}}); empty when it cannot be shaped. */
    static Optional<StatementShape> of(ObjectNode statement) {
        requireNonNull(statement, "statement is null");
        List<JsonNode> constants = new ArrayList<>();
        Optional<JsonNode> masked = mask(statement, constants, false);
        return masked.map(tree -> new StatementShape((ObjectNode) tree, constants));
    }

    /** The tree with slots for constants, to rewrite; a copy of the statement, which stays as it was. */
    ObjectNode masked() {
        return masked;
    }

    /** The shape as text, for a cache key: equal keys, equal trees but for the constants. */
    String key() {
        return key;
    }

    int constants() {
        return constants.size();
    }

    /**
     * Puts this statement's constants into a tree rewritten from its shape (in place), each slot taking the constant it
     * was made from.
     *
     * @throws MallardException {@code system.internal} when the tree holds a slot this shape did not make
     */
    ObjectNode fill(ObjectNode rewritten) {
        fillIn(rewritten);
        return rewritten;
    }

    private void fillIn(JsonNode node) {
        if (node instanceof ObjectNode object) {
            for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext();) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (isSlot(field.getValue())) {
                    field.setValue(constant(field.getValue()));
                } else {
                    fillIn(field.getValue());
                }
            }
        } else if (node instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                if (isSlot(array.get(i))) {
                    array.set(i, constant(array.get(i)));
                } else {
                    fillIn(array.get(i));
                }
            }
        }
    }

    private static boolean isSlot(JsonNode node) {
        return node instanceof ObjectNode object && object.has(SLOT);
    }

    private JsonNode constant(JsonNode slot) {
        JsonNode number = slot.get(SLOT);
        if (slot.size() != 3 || !number.canConvertToInt() || number.asInt() < 0 || number.asInt() >= constants.size()) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "a rewritten statement holds a constant slot its shape did not make: " + slot);
        }
        return constants.get(number.asInt()).deepCopy();
    }

    /** A copy of {@code node} with constants in slots (unless {@code verbatim}); empty when it already holds a slot field. */
    private static Optional<JsonNode> mask(JsonNode node, List<JsonNode> constants, boolean verbatim) {
        if (node instanceof ObjectNode object) {
            if (object.has(SLOT)) {
                return Optional.empty();
            }
            if (!verbatim && object.path("class").asText("").equals("CONSTANT")) {
                ObjectNode slot = JsonNodeFactory.instance.objectNode();
                slot.put("class", "CONSTANT");
                slot.put("type", "VALUE_CONSTANT");
                slot.put(SLOT, constants.size());
                constants.add(object);
                return Optional.of(slot);
            }
            boolean inner = verbatim || object.path("type").asText("").equals("TABLE_FUNCTION");
            ObjectNode copy = JsonNodeFactory.instance.objectNode();
            for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext();) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (field.getKey().startsWith("query_location")) {
                    continue;
                }
                Optional<JsonNode> child = mask(field.getValue(), constants, inner);
                if (child.isEmpty()) {
                    return Optional.empty();
                }
                copy.set(field.getKey(), child.get());
            }
            return Optional.of(copy);
        }
        if (node instanceof ArrayNode array) {
            ArrayNode copy = JsonNodeFactory.instance.arrayNode(array.size());
            for (JsonNode element : array) {
                Optional<JsonNode> child = mask(element, constants, verbatim);
                if (child.isEmpty()) {
                    return Optional.empty();
                }
                copy.add(child.get());
            }
            return Optional.of(copy);
        }
        return Optional.of(node);
    }
}
