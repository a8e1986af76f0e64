// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import java.util.LinkedHashMap;
import java.util.Map;

/** The little JSON the login exchange needs: a flat object written, a flat object's scalar members read. */
final class Json {
    private Json() {}

    static String object(Map<String, ?> members) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, ?> e : members.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            string(out, e.getKey());
            out.append(':');
            Object value = e.getValue();
            if (value instanceof Map<?, ?> map) {
                Map<String, Object> nested = new LinkedHashMap<>();
                map.forEach((k, v) -> nested.put(String.valueOf(k), v));
                out.append(object(nested));
            } else if (value == null) {
                out.append("null");
            } else {
                string(out, value.toString());
            }
        }
        return out.append('}').toString();
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** The top-level string, number and boolean members of a JSON object, as text; nested values are skipped. */
    static Map<String, String> members(String json) {
        Reader r = new Reader(json);
        Map<String, String> out = new LinkedHashMap<>();
        r.skipSpace();
        r.expect('{');
        r.skipSpace();
        if (r.peek() == '}') {
            return out;
        }
        while (true) {
            r.skipSpace();
            String key = r.string();
            r.skipSpace();
            r.expect(':');
            r.skipSpace();
            String value = r.value();
            if (value != null) {
                out.put(key, value);
            }
            r.skipSpace();
            char c = r.next();
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw new IllegalArgumentException("not a JSON object: " + json);
            }
        }
    }

    private static final class Reader {
        private final String s;
        private int i;

        Reader(String s) {
            this.s = s;
        }

        char peek() {
            if (i >= s.length()) {
                throw new IllegalArgumentException("JSON ends early");
            }
            return s.charAt(i);
        }

        char next() {
            char c = peek();
            i++;
            return c;
        }

        void expect(char c) {
            if (next() != c) {
                throw new IllegalArgumentException("JSON: expected '" + c + "' at " + (i - 1));
            }
        }

        void skipSpace() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c == '\\') {
                    char e = next();
                    switch (e) {
                        case 'n' -> out.append('\n');
                        case 't' -> out.append('\t');
                        case 'r' -> out.append('\r');
                        case 'b' -> out.append('\b');
                        case 'f' -> out.append('\f');
                        case 'u' -> {
                            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> out.append(e);
                    }
                } else {
                    out.append(c);
                }
            }
        }

        /** A scalar as text, or null for null and for a nested value (skipped). */
        String value() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (c == '{' || c == '[') {
                skipNested();
                return null;
            }
            int start = i;
            while (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) {
                i++;
            }
            String text = s.substring(start, i);
            return text.equals("null") ? null : text;
        }

        private void skipNested() {
            int depth = 0;
            do {
                char c = peek();
                if (c == '"') {
                    string();
                    continue;
                }
                i++;
                if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                }
            } while (depth > 0);
        }
    }
}
