// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import java.io.IOException;
import java.math.BigInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VariableWidthFieldVector;

/**
 * Encoders for booleans and numbers. Every integer vector is a JSON number, even a BIGINT beyond 2^53 that a
 * reader parsing numbers as doubles would round; DECIMAL and the 128-bit and unbounded integers are strings of
 * their digits, since they are routinely beyond that.
 */
final class NumberEncoders {
    private NumberEncoders() {}

    record Nulls() implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            out.writeNull();
        }
    }

    record Bool(BitVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.writeBoolean(vector.get(index) != 0);
            }
        }
    }

    /** {@code arrow.bool8}: a boolean in a byte, any non-zero byte true. */
    record Bool8(TinyIntVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.writeBoolean(vector.get(index) != 0);
            }
        }
    }

    record Int8(TinyIntVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getByte(index));
            }
        }
    }

    record Int16(SmallIntVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getShort(2L * index));
            }
        }
    }

    record Int32(IntVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getInt(4L * index));
            }
        }
    }

    record Int64(BigIntVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getLong(8L * index));
            }
        }
    }

    record UInt8(UInt1Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getByte(index) & 0xFF);
            }
        }
    }

    record UInt16(UInt2Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getShort(2L * index) & 0xFFFF);
            }
        }
    }

    record UInt32(UInt4Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                out.appendLong(vector.getDataBuffer().getInt(4L * index) & 0xFFFF_FFFFL);
            }
        }
    }

    /** UBIGINT: values of 2^63 and above are negative as a Java long and must be printed unsigned. */
    record UInt64(UInt8Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            out.appendUnsignedLong(vector.getDataBuffer().getLong(8L * index));
        }
    }

    record Float16(Float2Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                writeFloat(out, Float.float16ToFloat(vector.getDataBuffer().getShort(2L * index)));
            }
        }
    }

    record Float32(Float4Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
            } else {
                writeFloat(out, vector.getDataBuffer().getFloat(4L * index));
            }
        }
    }

    record Float64(Float8Vector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            double value = vector.getDataBuffer().getDouble(8L * index);
            if (Double.isFinite(value)) {
                out.writeDouble(value);
            } else {
                out.writeAsciiString(nonFinite(value));
            }
        }
    }

    private static void writeFloat(JsonOutput out, float value) {
        if (Float.isFinite(value)) {
            out.writeFloat(value);
        } else {
            out.writeAsciiString(nonFinite(value));
        }
    }

    // JSON has no NaN or infinities; these spellings are what Java, JavaScript and Python parse back.
    private static String nonFinite(double value) {
        return Double.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    }

    private static void decimal(JsonOutput out, long unscaled, int scale, boolean quoted) {
        if (quoted) {
            out.append('"').appendDecimal(unscaled, scale).append('"');
        } else {
            out.appendDecimal(unscaled, scale);
        }
    }

    private static void plain(JsonOutput out, String digits, boolean quoted) {
        if (quoted) {
            out.writeAsciiString(digits);
        } else {
            out.append(digits);
        }
    }

    /** DECIMAL up to 38 digits, and HUGEINT, which DuckDB exports as DECIMAL(38,0). */
    record Decimal128(DecimalVector vector, int scale, boolean quoted) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            long low = data.getLong(16L * index);
            long high = data.getLong(16L * index + 8);
            // Most values fit a long (the high word only extends the sign): format those without a BigDecimal.
            if (high == low >> 63) {
                decimal(out, low, scale, quoted);
            } else {
                plain(out, vector.getObject(index).toPlainString(), quoted);
            }
        }
    }

    record Decimal256(Decimal256Vector vector, int scale, boolean quoted) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            long offset = 32L * index;
            long low = data.getLong(offset);
            long sign = low >> 63;
            if (data.getLong(offset + 8) == sign && data.getLong(offset + 16) == sign && data.getLong(offset + 24) == sign) {
                decimal(out, low, scale, quoted);
            } else {
                plain(out, vector.getObject(index).toPlainString(), quoted);
            }
        }
    }

    /**
     * HUGEINT or UHUGEINT as DuckDB exports them under {@code arrow_lossless_conversion}: 16 bytes of
     * little-endian two's complement in an opaque extension. Written as a JSON number of its exact digits: it is
     * an integer (what {@code sum} of a BIGINT column returns), so it keeps its JSON type as SQLFlow's output did.
     */
    record Int128(FixedSizeBinaryVector vector, boolean unsigned) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            long low = data.getLong(16L * index);
            long high = data.getLong(16L * index + 8);
            if (unsigned ? high == 0 && low >= 0 : high == low >> 63) {
                out.appendLong(low);
                return;
            }
            byte[] bigEndian = new byte[16];
            for (int i = 0; i < 16; i++) {
                bigEndian[15 - i] = data.getByte(16L * index + i);
            }
            BigInteger value = unsigned ? new BigInteger(1, bigEndian) : new BigInteger(bigEndian);
            out.append(value.toString());
        }
    }

    /**
     * DuckDB's BIGNUM (formerly VARINT), exported as an opaque binary: a 3-byte header whose top bit is set for
     * non-negative numbers and whose other bits count the magnitude bytes, then the magnitude big-endian; for
     * negative numbers header and magnitude are bitwise inverted. Written as the string of its digits.
     */
    record Bignum(VariableWidthFieldVector vector, Scratch scratch) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            vector.read(index, scratch.bytes);
            byte[] bytes = scratch.bytes.getBuffer();
            int length = (int) scratch.bytes.getLength();
            boolean negative = (bytes[0] & 0x80) == 0;
            byte[] magnitude = new byte[length - 3];
            for (int i = 3; i < length; i++) {
                magnitude[i - 3] = negative ? (byte) ~bytes[i] : bytes[i];
            }
            BigInteger value = new BigInteger(1, magnitude);
            out.writeAsciiString((negative ? value.negate() : value).toString());
        }
    }
}
