// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.LargeListViewVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.NonNullableStructVector;
import org.apache.arrow.vector.complex.UnionVector;

/**
 * Encoders for lists, structs, maps, unions and dictionary-encoded values, composed of their children's
 * encoders. They write their own brackets and commas.
 */
final class NestedEncoders {
    private static final byte[] KEY = "{\"key\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] VALUE = ",\"value\":".getBytes(StandardCharsets.US_ASCII);

    private NestedEncoders() {}

    /**
     * The bytes that open each member of an object: {@code {"name":} for the first, {@code ,"name":} for the
     * others, with the name escaped. Computed once per schema so a row only copies them.
     */
    static byte[][] memberPrefixes(java.util.List<String> names) {
        byte[][] prefixes = new byte[names.size()][];
        for (int i = 0; i < prefixes.length; i++) {
            byte[] name = JsonStringEncoder.getInstance().quoteAsUTF8(names.get(i));
            byte[] prefix = new byte[name.length + 4];
            prefix[0] = (byte) (i == 0 ? '{' : ',');
            prefix[1] = '"';
            System.arraycopy(name, 0, prefix, 2, name.length);
            prefix[name.length + 2] = '"';
            prefix[name.length + 3] = ':';
            prefixes[i] = prefix;
        }
        return prefixes;
    }

    record ListArray(ListVector vector, ValueEncoder elements) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            writeArray(out, elements, offsets.getInt(4L * index), offsets.getInt(4L * index + 4));
        }
    }

    record LargeListArray(LargeListVector vector, ValueEncoder elements) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            writeArray(out, elements, (int) offsets.getLong(8L * index), (int) offsets.getLong(8L * index + 8));
        }
    }

    /** DuckDB's ARRAY type. */
    record FixedSizeListArray(FixedSizeListVector vector, ValueEncoder elements) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            int size = vector.getListSize();
            writeArray(out, elements, index * size, index * size + size);
        }
    }

    /** LIST as DuckDB exports it under {@code arrow_output_list_view}: an offset and a size per value. */
    record ListViewArray(ListViewVector vector, ValueEncoder elements) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            int start = vector.getOffsetBuffer().getInt(4L * index);
            writeArray(out, elements, start, start + vector.getSizeBuffer().getInt(4L * index));
        }
    }

    record LargeListViewArray(LargeListViewVector vector, ValueEncoder elements) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            long start = vector.getOffsetBuffer().getLong(8L * index);
            writeArray(out, elements, (int) start, (int) (start + vector.getSizeBuffer().getLong(8L * index)));
        }
    }

    private static void writeArray(JsonOutput out, ValueEncoder elements, int start, int end) throws IOException {
        out.append('[');
        for (int i = start; i < end; i++) {
            if (i > start) {
                out.append(',');
            }
            elements.write(out, i);
        }
        out.append(']');
    }

    /** STRUCT: an object with the fields in their declared order. */
    record Struct(NonNullableStructVector vector, byte[][] prefixes, ValueEncoder[] fields) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            if (fields.length == 0) {
                out.append('{');
            }
            for (int i = 0; i < fields.length; i++) {
                out.append(prefixes[i]);
                fields[i].write(out, index);
            }
            out.append('}');
        }
    }

    /** MAP with text keys: a JSON object, entries in their stored order. */
    record MapObject(MapVector vector, FieldVector keyVector, ValueEncoder keys, ValueEncoder values, String path)
            implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            int start = offsets.getInt(4L * index);
            int end = offsets.getInt(4L * index + 4);
            out.append('{');
            for (int i = start; i < end; i++) {
                if (keyVector.isNull(i)) {
                    // Arrow and DuckDB both forbid NULL keys; one here is a defect upstream, not user data.
                    throw new MallardException(ErrorCode.SYSTEM_INTERNAL,
                            "Map column " + path + " has a NULL key at row " + index + ", which Arrow does not allow");
                }
                if (i > start) {
                    out.append(',');
                }
                keys.write(out, i);
                out.append(':');
                values.write(out, i);
            }
            out.append('}');
        }
    }

    /** MAP with keys of any other type: an array of {"key": ..., "value": ...} objects. */
    record MapEntries(MapVector vector, ValueEncoder keys, ValueEncoder values) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            int start = offsets.getInt(4L * index);
            int end = offsets.getInt(4L * index + 4);
            out.append('[');
            for (int i = start; i < end; i++) {
                if (i > start) {
                    out.append(',');
                }
                out.append(KEY);
                keys.write(out, i);
                out.append(VALUE);
                values.write(out, i);
                out.append('}');
            }
            out.append(']');
        }
    }

    /** Sparse UNION (what DuckDB exports): the active member's value, at the same index in every member. */
    record SparseUnion(UnionVector vector, ValueEncoder[] membersByTypeId, String path) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            member(membersByTypeId, vector.getTypeValue(index), path).write(out, index);
        }
    }

    /** Dense UNION: the active member's value, at the offset the union stores for this row. */
    record DenseUnion(DenseUnionVector vector, ValueEncoder[] membersByTypeId, String path) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            member(membersByTypeId, vector.getTypeId(index), path).write(out, vector.getOffset(index));
        }
    }

    private static ValueEncoder member(ValueEncoder[] membersByTypeId, int typeId, String path) {
        ValueEncoder member = typeId >= 0 && typeId < membersByTypeId.length ? membersByTypeId[typeId] : null;
        if (member == null) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL,
                    "Union column " + path + " has type id " + typeId + ", which its Arrow type does not declare");
        }
        return member;
    }

    /** A dictionary-encoded column (DuckDB's ENUM): the dictionary's value at the stored index. */
    record Dictionary(BaseIntVector indices, ValueEncoder values) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (indices.isNull(index)) {
                out.writeNull();
            } else {
                values.write(out, (int) indices.getValueAsLong(index));
            }
        }
    }
}
