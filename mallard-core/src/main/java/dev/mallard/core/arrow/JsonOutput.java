// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.Base64Variant;
import com.fasterxml.jackson.core.Base64Variants;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The byte buffer JSON is written into, drained to a stream when full. Values are formatted straight into it
 * (digits, dates, escaped strings), so nothing is formatted twice or copied through a second buffer.
 *
 * <p>It knows nothing of JSON structure: encoders write their own brackets and commas, which is what lets the
 * row loop skip the per-value bookkeeping a general-purpose generator does.
 *
 * <p>Every method reserves the room it needs before writing, and may drain the buffer to do so, so no method
 * refers to bytes written by an earlier call.
 */
final class JsonOutput {
    private static final int CAPACITY = 64 * 1024;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] UPPER_HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final Base64Variant BASE64 = Base64Variants.MIME_NO_LINEFEEDS;
    /**
     * For each byte, 0 if it stands for itself in a JSON string, else the character after the backslash of its
     * short escape, or 'u' for the six-character form. Bytes of 0x80 and above (multi-byte UTF-8) are never
     * escaped. 256 entries so a byte indexes it with {@code b & 0xFF} and no sign test.
     */
    private static final byte[] ESCAPES = new byte[256];
    /** "00", "01", ... "99": digits are written two per division. */
    private static final byte[] DIGIT_PAIRS = new byte[200];

    static {
        for (int c = 0; c < 0x20; c++) {
            ESCAPES[c] = 'u';
        }
        ESCAPES['"'] = '"';
        ESCAPES['\\'] = '\\';
        ESCAPES['\n'] = 'n';
        ESCAPES['\r'] = 'r';
        ESCAPES['\t'] = 't';
        ESCAPES['\b'] = 'b';
        ESCAPES['\f'] = 'f';
        for (int i = 0; i < 100; i++) {
            DIGIT_PAIRS[2 * i] = (byte) ('0' + i / 10);
            DIGIT_PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    private final OutputStream drain;
    private byte[] bytes;
    private int length;
    private byte[] spill = new byte[256];

    /** A buffer drained to {@code drain}, which it never closes. */
    JsonOutput(OutputStream drain) {
        this.drain = requireNonNull(drain, "drain is null");
        this.bytes = new byte[CAPACITY];
    }

    /** A buffer that only grows, for formatting values into memory. */
    JsonOutput() {
        this.drain = null;
        this.bytes = new byte[64];
    }

    JsonOutput clear() {
        length = 0;
        return this;
    }

    byte[] bytes() {
        return bytes;
    }

    int length() {
        return length;
    }

    /** Writes everything buffered to the stream and flushes it. */
    void flush() throws IOException {
        drain();
        if (drain != null) {
            drain.flush();
        }
    }

    private void drain() throws IOException {
        if (drain != null && length > 0) {
            drain.write(bytes, 0, length);
            length = 0;
        }
    }

    /** Makes room for {@code extra} more bytes: drains when it can, grows when it must. */
    void ensure(int extra) {
        if (length + extra > bytes.length) {
            makeRoom(extra);
        }
    }

    // Out of line so that ensure, called for every value, stays small enough to inline.
    private void makeRoom(int extra) {
        try {
            drain();
        } catch (IOException e) {
            // Callers declare IOException; this unchecked detour keeps the many small appends free of it.
            throw new UncheckedIOException(e);
        }
        if (length + extra > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + extra));
        }
    }

    // ---- Plain bytes and ASCII text.

    JsonOutput append(char ascii) {
        ensure(1);
        bytes[length++] = (byte) ascii;
        return this;
    }

    JsonOutput append(String ascii) {
        ensure(ascii.length());
        for (int i = 0; i < ascii.length(); i++) {
            bytes[length++] = (byte) ascii.charAt(i);
        }
        return this;
    }

    JsonOutput append(byte[] source, int offset, int count) {
        ensure(count);
        System.arraycopy(source, offset, bytes, length, count);
        length += count;
        return this;
    }

    JsonOutput append(byte[] source) {
        return append(source, 0, source.length);
    }

    // ---- Numbers.

    /** Appends a non-negative value, left-padded with zeros to at least {@code width} digits. */
    JsonOutput appendPadded(long value, int width) {
        int digits = digits(value);
        int size = Math.max(width, digits);
        ensure(size);
        int end = length + size;
        writeDigitsBackwards(value, end);
        for (int i = end - digits - 1; i >= length; i--) {
            bytes[i] = '0';
        }
        length = end;
        return this;
    }

    /** Appends {@code value}, 0 to 99, as two digits: the common case of dates and times. */
    JsonOutput appendTwoDigits(int value) {
        ensure(2);
        bytes[length] = (byte) ('0' + value / 10);
        bytes[length + 1] = (byte) ('0' + value % 10);
        length += 2;
        return this;
    }

    JsonOutput appendLong(long value) {
        ensure(20);
        if (value < 0) {
            bytes[length++] = '-';
        }
        appendMagnitude(value);
        return this;
    }

    JsonOutput appendUnsignedLong(long value) {
        if (value >= 0) {
            return appendLong(value);
        }
        // 2^63 and above: halve to get into long range, then restore the last digit.
        long quotient = (value >>> 1) / 5;
        long remainder = value - quotient * 10;
        return appendLong(quotient).append((char) ('0' + remainder));
    }

    /**
     * Appends {@code unscaled / 10^scale} with exactly {@code scale} fraction digits, as
     * {@link java.math.BigDecimal#toPlainString()} does.
     */
    JsonOutput appendDecimal(long unscaled, int scale) {
        ensure(22 + Math.abs(scale));
        if (unscaled < 0) {
            bytes[length++] = '-';
        }
        int start = length;
        appendMagnitude(unscaled);
        if (scale <= 0) {
            for (int i = 0; i < -scale; i++) {
                bytes[length++] = '0';
            }
            return this;
        }
        int digits = length - start;
        if (digits <= scale) {
            // 5 with scale 2 is 0.05: pad to one integer digit plus the fraction.
            int pad = scale + 1 - digits;
            System.arraycopy(bytes, start, bytes, start + pad, digits);
            Arrays.fill(bytes, start, start + pad, (byte) '0');
            length += pad;
        }
        int point = length - scale;
        System.arraycopy(bytes, point, bytes, point + 1, scale);
        bytes[point] = '.';
        length++;
        return this;
    }

    /** Appends {@code count} bytes of {@code value}, most significant first, as lowercase hex. */
    JsonOutput appendHex(long value, int count) {
        ensure(2 * count);
        for (int shift = 8 * (count - 1); shift >= 0; shift -= 8) {
            int b = (int) (value >>> shift) & 0xFF;
            bytes[length++] = HEX[b >>> 4];
            bytes[length++] = HEX[b & 0xF];
        }
        return this;
    }

    private void appendMagnitude(long value) {
        if (value == Long.MIN_VALUE) {
            append("9223372036854775808");
            return;
        }
        long magnitude = Math.abs(value);
        int end = length + digits(magnitude);
        writeDigitsBackwards(magnitude, end);
        length = end;
    }

    // Digits come least significant first, so they are written from the end: nothing to reverse afterwards.
    private void writeDigitsBackwards(long value, int end) {
        int i = end;
        while (value >= 100) {
            long quotient = value / 100;
            int pair = 2 * (int) (value - quotient * 100);
            bytes[--i] = DIGIT_PAIRS[pair + 1];
            bytes[--i] = DIGIT_PAIRS[pair];
            value = quotient;
        }
        if (value >= 10) {
            bytes[--i] = DIGIT_PAIRS[2 * (int) value + 1];
            bytes[--i] = DIGIT_PAIRS[2 * (int) value];
        } else {
            bytes[--i] = (byte) ('0' + value);
        }
    }

    /** The number of decimal digits of a non-negative value. */
    static int digits(long value) {
        long bound = 10;
        for (int digits = 1; digits < 19; digits++) {
            if (value < bound) {
                return digits;
            }
            bound *= 10;
        }
        return 19;
    }

    // ---- JSON values.

    void writeNull() {
        append(NULL, 0, 4);
    }

    void writeBoolean(boolean value) {
        if (value) {
            append(TRUE, 0, 4);
        } else {
            append(FALSE, 0, 5);
        }
    }

    /** A finite double, as {@link Double#toString(double)} prints it: a valid JSON number that reads back exactly. */
    void writeDouble(double value) {
        append(Double.toString(value));
    }

    /** A finite float, printed as a float so 1.1f is 1.1, not the 1.100000023841858 of its double widening. */
    void writeFloat(float value) {
        append(Float.toString(value));
    }

    /** A quoted string of text that needs no escaping: digits, dates, UUIDs. */
    void writeAsciiString(String ascii) {
        ensure(ascii.length() + 2);
        bytes[length++] = '"';
        append(ascii);
        bytes[length++] = '"';
    }

    /** A quoted, escaped string from UTF-8 bytes in Arrow memory. */
    void writeString(ArrowBuf data, long offset, int count) {
        ensure(count + 2);
        bytes[length++] = '"';
        int start = length;
        // Copy first and scan in place: most strings need no escape, and then this one copy is all.
        data.getBytes(offset, bytes, start, count);
        int escape = firstEscape(bytes, start, count);
        if (escape < 0) {
            length = start + count;
        } else {
            // Escapes lengthen the text: move the unscanned rest out of the way and write it escaped.
            int rest = count - escape;
            if (spill.length < rest) {
                spill = new byte[Math.max(rest, 2 * spill.length)];
            }
            System.arraycopy(bytes, start + escape, spill, 0, rest);
            length = start + escape;
            appendEscaped(spill, 0, rest);
        }
        append('"');
    }

    /** A quoted, escaped string from UTF-8 bytes. */
    void writeString(byte[] source, int offset, int count) {
        ensure(2);
        bytes[length++] = '"';
        appendEscaped(source, offset, count);
        append('"');
    }

    /** A quoted, escaped string from any text (rare paths: it allocates). */
    void writeString(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        writeString(utf8, 0, utf8.length);
    }

    private static int firstEscape(byte[] text, int offset, int count) {
        for (int i = 0; i < count; i++) {
            if (ESCAPES[text[offset + i] & 0xFF] != 0) {
                return i;
            }
        }
        return -1;
    }

    private void appendEscaped(byte[] source, int offset, int count) {
        int end = offset + count;
        int run = offset;
        for (int i = offset; i < end; i++) {
            int b = source[i] & 0xFF;
            byte escape = ESCAPES[b];
            if (escape == 0) {
                continue;
            }
            append(source, run, i - run);
            run = i + 1;
            ensure(6);
            bytes[length++] = '\\';
            bytes[length++] = escape;
            if (escape == 'u') {
                // Upper-case hex, as Jackson writes it: \u001F.
                bytes[length++] = '0';
                bytes[length++] = '0';
                bytes[length++] = UPPER_HEX[b >> 4];
                bytes[length++] = UPPER_HEX[b & 0xF];
            }
        }
        append(source, run, end - run);
    }

    /**
     * JSON text embedded as is. Line breaks can only occur in valid JSON as insignificant whitespace (inside
     * strings they are escaped), and they would split the line, so they become spaces.
     */
    void writeRawJson(byte[] source, int offset, int count) {
        ensure(count);
        for (int i = 0; i < count; i++) {
            byte b = source[offset + i];
            bytes[length++] = b == '\n' || b == '\r' ? (byte) ' ' : b;
        }
    }

    /** Standard base64 with padding and no line breaks, quoted. */
    void writeBase64(byte[] source, int offset, int count) {
        ensure(2 + (count + 2) / 3 * 4);
        bytes[length++] = '"';
        int end = offset + count;
        int i = offset;
        for (; i + 3 <= end; i += 3) {
            int chunk = (source[i] & 0xFF) << 16 | (source[i + 1] & 0xFF) << 8 | source[i + 2] & 0xFF;
            length = BASE64.encodeBase64Chunk(chunk, bytes, length);
        }
        if (i < end) {
            int chunk = (source[i] & 0xFF) << 16 | (i + 1 < end ? (source[i + 1] & 0xFF) << 8 : 0);
            length = BASE64.encodeBase64Partial(chunk, end - i, bytes, length);
        }
        bytes[length++] = '"';
    }
}
