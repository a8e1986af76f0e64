// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

/** The JSON text this package writes into its SQL: pointers to a message's keys and JSON strings. */
final class JsonText {
    private JsonText() {}

    /**
     * The JSON pointer (RFC 6901) to a top-level key. A pointer rather than {@code $."key"} because DuckDB's
     * dollar syntax cannot name the empty key or a key {@code *}, while a pointer names every key once
     * {@code ~} and {@code /} are escaped.
     */
    static String topLevelPointer(String key) {
        return "/" + key.replace("~", "~0").replace("/", "~1");
    }

    /** A JSON string holding {@code text}. */
    static String jsonString(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
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
        return out.append('"').toString();
    }
}
