// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the type strings {@link SchemaInference} writes into a tree, for tests: a scalar is its name, a list
 * is a one-element {@link List} of its element, a struct a {@link Map} of field name to type.
 */
final class DuckDbTypes {
    private final String text;
    private int at;

    private DuckDbTypes(String text) {
        this.text = text;
    }

    static Object parse(String type) {
        DuckDbTypes parser = new DuckDbTypes(type);
        Object tree = parser.type();
        if (parser.at != type.length()) {
            throw new IllegalArgumentException("trailing text in " + type + " at " + parser.at);
        }
        return tree;
    }

    /** The same tree with every struct's fields sorted by name: structs compared as maps. */
    static Object unordered(Object tree) {
        if (tree instanceof Map<?, ?> struct) {
            Map<String, Object> sorted = new TreeMap<>();
            struct.forEach((name, type) -> sorted.put((String) name, unordered(type)));
            return sorted;
        }
        if (tree instanceof List<?> list) {
            return List.of(unordered(list.get(0)));
        }
        return tree;
    }

    private Object type() {
        Object base;
        if (text.startsWith("STRUCT(", at)) {
            at += "STRUCT(".length();
            Map<String, Object> fields = new LinkedHashMap<>();
            while (true) {
                String name = quoted();
                expect(' ');
                fields.put(name, type());
                if (text.charAt(at) == ')') {
                    at++;
                    break;
                }
                expect(',');
                expect(' ');
            }
            base = fields;
        } else {
            int start = at;
            while (at < text.length() && Character.isLetter(text.charAt(at))) {
                at++;
            }
            base = text.substring(start, at);
        }
        while (text.startsWith("[]", at)) {
            at += 2;
            base = List.of(base);
        }
        return base;
    }

    private String quoted() {
        expect('"');
        StringBuilder name = new StringBuilder();
        while (true) {
            char c = text.charAt(at++);
            if (c == '"') {
                if (at < text.length() && text.charAt(at) == '"') {
                    name.append('"');
                    at++;
                } else {
                    return name.toString();
                }
            } else {
                name.append(c);
            }
        }
    }

    private void expect(char c) {
        if (text.charAt(at) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + at + " in " + text);
        }
        at++;
    }
}
