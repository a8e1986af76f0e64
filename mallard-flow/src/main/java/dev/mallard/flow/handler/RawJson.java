// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

/**
 * Cheap checks on a message's bytes before they reach DuckDB, in one pass and without decoding.
 *
 * <p>The UTF-8 check is not optional: DuckDB takes VARCHAR bytes on trust from its clients. Its appender was
 * seen to drop the rows of a chunk silently when one value is not valid UTF-8, and an Arrow VARCHAR must be
 * valid UTF-8 by Arrow's contract; an unchecked bad message could lose or corrupt its batch without an error.
 */
final class RawJson {
    /** All whitespace (or empty): the message is skipped. */
    static final int BLANK = 0;
    /** Starts with {@code {} and is valid UTF-8: DuckDB decides the rest. */
    static final int OBJECT = 1;
    /** The first non-blank byte is not {@code {}: not JSON, or JSON whose top level is not an object. */
    static final int NOT_OBJECT = 2;
    /** Not valid UTF-8. */
    static final int BAD_UTF8 = 3;

    private RawJson() {}

    static int classify(byte[] bytes) {
        int i = 0;
        int n = bytes.length;
        while (i < n && isJsonWhitespace(bytes[i])) {
            i++;
        }
        if (i == n) {
            return BLANK;
        }
        if (bytes[i] != '{') {
            return NOT_OBJECT;
        }
        return isValidUtf8(bytes, i) ? OBJECT : BAD_UTF8;
    }

    static boolean isBlank(byte[] bytes) {
        for (byte b : bytes) {
            if (!isJsonWhitespace(b)) {
                return false;
            }
        }
        return true;
    }

    static String describe(int kind) {
        return switch (kind) {
            case NOT_OBJECT -> "the message is not a JSON object (it must start with '{')";
            case BAD_UTF8 -> "the message is not valid UTF-8";
            default -> throw new IllegalArgumentException("not a fault: " + kind);
        };
    }

    private static boolean isJsonWhitespace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    // Rejects what RFC 3629 rejects: stray continuation bytes, overlong forms, surrogates, > U+10FFFF.
    static boolean isValidUtf8(byte[] b, int from) {
        int i = from;
        int n = b.length;
        while (i < n) {
            int lead = b[i];
            if (lead >= 0) {
                i++;
                continue;
            }
            lead &= 0xFF;
            int extra;
            int min2 = 0x80;
            int max2 = 0xBF;
            if (lead >= 0xC2 && lead <= 0xDF) {
                extra = 1;
            } else if (lead >= 0xE0 && lead <= 0xEF) {
                extra = 2;
                if (lead == 0xE0) {
                    min2 = 0xA0;
                } else if (lead == 0xED) {
                    max2 = 0x9F;
                }
            } else if (lead >= 0xF0 && lead <= 0xF4) {
                extra = 3;
                if (lead == 0xF0) {
                    min2 = 0x90;
                } else if (lead == 0xF4) {
                    max2 = 0x8F;
                }
            } else {
                return false;
            }
            if (i + extra >= n) {
                return false;
            }
            int second = b[i + 1] & 0xFF;
            if (second < min2 || second > max2) {
                return false;
            }
            for (int k = 2; k <= extra; k++) {
                if ((b[i + k] & 0xC0) != 0x80) {
                    return false;
                }
            }
            i += extra + 1;
        }
        return true;
    }
}
