// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.source.Message;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;
import org.duckdb.DuckDBConnection;

class SchemaInferencePropertyTest {
    private final ObjectMapper json = new ObjectMapper();
    private DuckDBConnection connection;
    private JsonBatchLoader loader;

    @BeforeProperty
    void open() throws SQLException {
        connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
        loader = new JsonBatchLoader(connection);
    }

    @AfterProperty
    void close() throws SQLException {
        loader.close();
        connection.close();
    }

    /**
     * Every leaf that any message has is in the inferred schema, and after createAndLoad every non-null leaf
     * reads back with the same value (numbers compared numerically, an integer promoted to DOUBLE as a double).
     */
    @Property(tries = 200)
    void noFieldPresentAnywhereInABatchIsLost(@ForAll long seed, @ForAll @IntRange(min = 1, max = 12) int size)
            throws Exception {
        List<Map<String, Object>> values = new GeneratedBatches(seed, false).batch(size);
        List<Message> messages = messages(values);
        SchemaInference inference = new SchemaInference();
        messages.forEach(m -> inference.add(m.value(), m.position()));
        Map<String, Object> schema = new LinkedHashMap<>();
        for (Column column : inference.columns()) {
            schema.put(column.name(), DuckDbTypes.parse(column.type()));
        }
        for (Map<String, Object> value : values) {
            assertLeavesInSchema(value, schema, "");
        }

        loader.createAndLoad(messages, "batch", inference.columns());
        List<JsonNode> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT to_json(whole_row) FROM batch whole_row ORDER BY \"_id\"")) {
            while (result.next()) {
                rows.add(json.readTree(result.getString(1)));
            }
        }
        assertThat(rows).hasSize(values.size());
        for (int i = 0; i < values.size(); i++) {
            assertLeavesLoaded(values.get(i), rows.get(i), "message " + i);
        }
    }

    /**
     * The inferred types (structs as maps) and whether the batch conflicts do not depend on the order of the
     * messages, all of which share the top-level keys.
     */
    @Property(tries = 200)
    void promotionIsOrderIndependent(@ForAll long seed, @ForAll @IntRange(min = 2, max = 12) int size,
            @ForAll boolean withConflicts) throws Exception {
        List<Message> messages = messages(new GeneratedBatches(seed, withConflicts).batch(size));
        List<Message> shuffled = new ArrayList<>(messages);
        Collections.shuffle(shuffled, new Random(seed ^ 0x5DEECE66DL));
        assertThat(outcome(shuffled)).isEqualTo(outcome(messages));
    }

    /** Column name to type with struct fields unordered, or "conflict". */
    private static Object outcome(List<Message> messages) {
        SchemaInference inference = new SchemaInference();
        try {
            messages.forEach(m -> inference.add(m.value(), m.position()));
        } catch (MallardException e) {
            return "conflict";
        }
        Map<String, Object> types = new java.util.TreeMap<>();
        for (Column column : inference.columns()) {
            types.put(column.name(), DuckDbTypes.unordered(DuckDbTypes.parse(column.type())));
        }
        return types;
    }

    private List<Message> messages(List<Map<String, Object>> values) throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            messages.add(Message.ofLine("gen", i, json.writeValueAsBytes(values.get(i))));
        }
        return messages;
    }

    /** Each non-null leaf of value has a place in the type tree. */
    private static void assertLeavesInSchema(Object value, Object type, String path) {
        if (value == null) {
            return;
        }
        if (value instanceof Map<?, ?> object) {
            if (object.isEmpty()) {
                return;
            }
            assertThat(type).as(path).isInstanceOf(Map.class);
            Map<?, ?> fields = (Map<?, ?>) type;
            object.forEach((key, field) -> {
                if (field != null) {
                    assertThat(fields.containsKey(key)).as(path + "." + key + " in " + fields.keySet()).isTrue();
                }
                assertLeavesInSchema(field, fields.get(key), path + "." + key);
            });
        } else if (value instanceof List<?> list) {
            if (list.stream().allMatch(e -> e == null)) {
                return;
            }
            assertThat(type).as(path).isInstanceOf(List.class);
            for (Object element : list) {
                assertLeavesInSchema(element, ((List<?>) type).get(0), path + "[]");
            }
        } else {
            assertThat(type).as(path).isInstanceOf(String.class).isNotEqualTo("JSON");
        }
    }

    private static void assertLeavesLoaded(Object value, JsonNode loaded, String path) {
        if (value == null) {
            return;
        }
        assertThat(loaded).as(path).isNotNull();
        if (value instanceof Map<?, ?> object) {
            object.forEach((key, field) -> assertLeavesLoaded(field, loaded.get((String) key), path + "." + key));
        } else if (value instanceof List<?> list) {
            assertThat(loaded.isArray()).as(path).isTrue();
            assertThat(loaded.size()).as(path).isEqualTo(list.size());
            for (int i = 0; i < list.size(); i++) {
                assertLeavesLoaded(list.get(i), loaded.get(i), path + "[" + i + "]");
            }
        } else if (value instanceof String text) {
            assertThat(loaded.textValue()).as(path).isEqualTo(text);
        } else if (value instanceof Boolean bool) {
            assertThat(loaded.booleanValue()).as(path).isEqualTo(bool);
        } else {
            assertThat(loaded.isNumber()).as(path + " = " + loaded).isTrue();
            if (loaded.isFloatingPointNumber() || value instanceof Double) {
                assertThat(loaded.doubleValue()).as(path).isEqualTo(new BigDecimal(value.toString()).doubleValue());
            } else {
                assertThat(loaded.bigIntegerValue()).as(path).isEqualTo(new BigInteger(value.toString()));
            }
        }
    }
}
