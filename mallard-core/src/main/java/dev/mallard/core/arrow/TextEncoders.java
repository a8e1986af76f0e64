// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import java.io.IOException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;

/** Encoders for strings, JSON text and binary values. */
final class TextEncoders {
    private TextEncoders() {}

    /**
     * VARCHAR in Arrow's usual layout, what DuckDB exports by default. The bytes are UTF-8 already, so they go
     * from Arrow memory into the output with one copy and are escaped in place if they need it.
     */
    record Utf8(VarCharVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            int start = offsets.getInt(4L * index);
            out.writeString(vector.getDataBuffer(), start, offsets.getInt(4L * index + 4) - start);
        }
    }

    /** VARCHAR in the large and view layouts, read through Arrow's reusable buffer. */
    record AnyUtf8(VariableWidthFieldVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            vector.read(index, scratch.bytes);
            out.writeString(scratch.bytes.getBuffer(), 0, (int) scratch.bytes.getLength());
        }
    }

    /** DuckDB's JSON type: the text is valid JSON, so it is embedded as is. */
    record RawJson(VariableWidthFieldVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            vector.read(index, scratch.bytes);
            out.writeRawJson(scratch.bytes.getBuffer(), 0, (int) scratch.bytes.getLength());
        }
    }

    /** BLOB and any other binary: standard base64 with padding and no line breaks. */
    record Base64(VariableWidthFieldVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            vector.read(index, scratch.bytes);
            out.writeBase64(scratch.bytes.getBuffer(), 0, (int) scratch.bytes.getLength());
        }
    }

    record FixedBase64(FixedSizeBinaryVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            int width = vector.getByteWidth();
            byte[] bytes = scratch.fixed(width);
            vector.getDataBuffer().getBytes((long) width * index, bytes, 0, width);
            out.writeBase64(bytes, 0, width);
        }
    }

    /** The {@code arrow.uuid} extension: 16 bytes in network order, written in the canonical 8-4-4-4-12 form. */
    record Uuid(FixedSizeBinaryVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            // ArrowBuf reads little-endian; the UUID's bytes are big-endian.
            long high = Long.reverseBytes(data.getLong(16L * index));
            long low = Long.reverseBytes(data.getLong(16L * index + 8));
            out.append('"')
                    .appendHex(high >>> 32, 4).append('-')
                    .appendHex(high >>> 16, 2).append('-')
                    .appendHex(high, 2).append('-')
                    .appendHex(low >>> 48, 2).append('-')
                    .appendHex(low, 6).append('"');
        }
    }

    /**
     * DuckDB's BIT, exported as an opaque binary under lossless conversion: the first byte counts the padding
     * bits at the start of the second byte, then the bits follow most significant first. Written as a string
     * of 0s and 1s.
     */
    record BitString(VariableWidthFieldVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            vector.read(index, scratch.bytes);
            byte[] bytes = scratch.bytes.getBuffer();
            int length = (int) scratch.bytes.getLength();
            out.append('"');
            for (int bit = length > 0 ? bytes[0] : 0; bit < (length - 1) * 8; bit++) {
                out.append((bytes[1 + bit / 8] >>> (7 - bit % 8) & 1) == 0 ? '0' : '1');
            }
            out.append('"');
        }
    }
}
