// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random batches of nested JSON messages for the property tests, built from a random shape so that values
 * at one place have one kind (integers and doubles mix only where the shape says DOUBLE). Every message has
 * every top-level key of the shape (its value may be null) plus {@code _id}, its index; nested keys are a
 * random subset. With {@code conflicts}, a leaf now and then gets a value of another kind.
 */
final class GeneratedBatches {
    private static final String[] KEYS = {"a", "b", "c", "city", "d e", "q\"t", "x.y", "ü", "n/m", "it's"};
    private static final String[] STRINGS = {"", "x", "New York", "line\nbreak", "quote\"d", "é", "😀", "back\\slash", "tab\t"};

    private enum Kind { BOOL, INT, DOUBLE, STRING, OBJECT, LIST }

    private record Shape(Kind kind, Map<String, Shape> fields, Shape element) {}

    private final Random random;
    private final boolean conflicts;

    GeneratedBatches(long seed, boolean conflicts) {
        this.random = new Random(seed);
        this.conflicts = conflicts;
    }

    /** A batch of messages as Java values (maps, lists, strings, numbers, booleans, null). */
    List<Map<String, Object>> batch(int size) {
        Shape top = object(0);
        List<Map<String, Object>> messages = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("_id", (long) i);
            for (Map.Entry<String, Shape> field : top.fields().entrySet()) {
                message.put(field.getKey(), value(field.getValue(), 1));
            }
            messages.add(message);
        }
        return messages;
    }

    private Shape shape(int depth) {
        int pick = random.nextInt(depth >= 3 ? 4 : 6);
        return switch (pick) {
            case 0 -> new Shape(Kind.BOOL, null, null);
            case 1 -> new Shape(Kind.INT, null, null);
            case 2 -> new Shape(Kind.DOUBLE, null, null);
            case 3 -> new Shape(Kind.STRING, null, null);
            case 4 -> object(depth + 1);
            default -> new Shape(Kind.LIST, null, shape(depth + 1));
        };
    }

    private Shape object(int depth) {
        Map<String, Shape> fields = new LinkedHashMap<>();
        int count = 1 + random.nextInt(4);
        for (int i = 0; i < count; i++) {
            fields.put(KEYS[random.nextInt(KEYS.length)], shape(depth));
        }
        return new Shape(Kind.OBJECT, fields, null);
    }

    private Object value(Shape shape, int depth) {
        if (random.nextInt(7) == 0) {
            return null;
        }
        if (conflicts && random.nextInt(40) == 0) {
            return wrongKind(shape.kind());
        }
        return switch (shape.kind()) {
            case BOOL -> random.nextBoolean();
            case INT -> integer();
            case DOUBLE -> random.nextBoolean() ? integer() : random.nextInt(2_000_000) / 64.0 - 10_000;
            case STRING -> STRINGS[random.nextInt(STRINGS.length)];
            case OBJECT -> {
                Map<String, Object> object = new LinkedHashMap<>();
                for (Map.Entry<String, Shape> field : shape.fields().entrySet()) {
                    if (random.nextInt(4) != 0) {
                        object.put(field.getKey(), value(field.getValue(), depth + 1));
                    }
                }
                yield object;
            }
            case LIST -> {
                List<Object> list = new ArrayList<>();
                int length = random.nextInt(4);
                for (int i = 0; i < length; i++) {
                    list.add(value(shape.element(), depth + 1));
                }
                yield list;
            }
        };
    }

    private Object integer() {
        if (random.nextInt(30) == 0) {
            // beyond int64: HUGEINT, or DOUBLE where doubles are around
            return BigInteger.valueOf(random.nextLong()).multiply(BigInteger.valueOf(1_000_003L)).abs().add(BigInteger.TWO.pow(64));
        }
        return random.nextLong() % 1_000_000_000_000L;
    }

    private Object wrongKind(Kind kind) {
        List<Object> others = new ArrayList<>();
        if (kind != Kind.STRING) {
            others.add("s");
        }
        if (kind != Kind.BOOL) {
            others.add(Boolean.TRUE);
        }
        if (kind != Kind.INT && kind != Kind.DOUBLE) {
            others.add(7L);
        }
        if (kind != Kind.OBJECT) {
            others.add(new LinkedHashMap<>(Map.of("z", 1L)));
        }
        if (kind != Kind.LIST) {
            others.add(new ArrayList<>(List.of(1L)));
        }
        return others.get(random.nextInt(others.size()));
    }
}
