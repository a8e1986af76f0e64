// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.ViewVarBinaryVector;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.LargeListViewVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.NonNullableStructVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Chooses, once per schema, the encoder for each vector, recursing into nested types. Every decision that
 * depends on the type (layout, unit, time zone, extension) is made here so the encoders only move data.
 * A type without an encoder fails here, before any row is written.
 *
 * <p>Types are read from the schema's fields, not from the vectors: a vector may rebuild its field from its own
 * state and lose what the producer declared (a UnionVector, for one, replaces the union's type ids).
 */
final class EncoderFactory {
    /** A dictionary an encoder reads from, so a later batch can check it still reads the same vector. */
    record BoundDictionary(long id, ValueVector vector) {}

    private final DictionaryProvider dictionaries;
    private final Scratch scratch;
    private final JsonLinesWriter.Decimals decimals;
    private final List<BoundDictionary> bound = new ArrayList<>();

    /** @param dictionaries the provider for dictionary-encoded columns, or null when there is none */
    EncoderFactory(DictionaryProvider dictionaries, Scratch scratch, JsonLinesWriter.Decimals decimals) {
        this.decimals = requireNonNull(decimals, "decimals is null");
        this.dictionaries = dictionaries;
        this.scratch = requireNonNull(scratch, "scratch is null");
    }

    List<BoundDictionary> boundDictionaries() {
        return List.copyOf(bound);
    }

    /** @param field the column's field in the schema, which describes {@code column} */
    ValueEncoder create(FieldVector column, Field field) {
        return create(field.getName(), field.getName(), column, field);
    }

    private ValueEncoder create(String column, String path, FieldVector vector, Field field) {
        DictionaryEncoding encoding = field.getDictionary();
        if (encoding != null) {
            return dictionary(column, path, vector, field, encoding);
        }
        if (vector instanceof ExtensionTypeVector<?> extension) {
            FieldVector storage = extension.getUnderlyingVector();
            return plain(column, path, storage, storage.getField(), ArrowExtension.of(field));
        }
        return plain(column, path, vector, field, ArrowExtension.of(field));
    }

    // The field of a vector's i-th child: the schema's when it has one, else the child's own.
    private static Field child(Field parent, int i, FieldVector child) {
        List<Field> children = parent.getChildren();
        return i < children.size() ? children.get(i) : child.getField();
    }

    private ValueEncoder element(String column, String path, FieldVector elements, Field list) {
        return create(column, path + "[]", elements, child(list, 0, elements));
    }

    private ValueEncoder plain(String column, String path, FieldVector vector, Field field, ArrowExtension extension) {
        return switch (vector) {
            case NullVector v -> new NumberEncoders.Nulls();
            case BitVector v -> new NumberEncoders.Bool(v);
            case TinyIntVector v -> extension.isBool8() ? new NumberEncoders.Bool8(v) : new NumberEncoders.Int8(v);
            case SmallIntVector v -> new NumberEncoders.Int16(v);
            case IntVector v -> new NumberEncoders.Int32(v);
            case BigIntVector v -> new NumberEncoders.Int64(v);
            case UInt1Vector v -> new NumberEncoders.UInt8(v);
            case UInt2Vector v -> new NumberEncoders.UInt16(v);
            case UInt4Vector v -> new NumberEncoders.UInt32(v);
            case UInt8Vector v -> new NumberEncoders.UInt64(v);
            case Float2Vector v -> new NumberEncoders.Float16(v);
            case Float4Vector v -> new NumberEncoders.Float32(v);
            case Float8Vector v -> new NumberEncoders.Float64(v);
            case DecimalVector v -> new NumberEncoders.Decimal128(v, v.getScale(), decimals == JsonLinesWriter.Decimals.STRINGS);
            case Decimal256Vector v -> new NumberEncoders.Decimal256(v, v.getScale(), decimals == JsonLinesWriter.Decimals.STRINGS);
            case VarCharVector v -> text(v, extension);
            case LargeVarCharVector v -> text(v, extension);
            case ViewVarCharVector v -> text(v, extension);
            case VarBinaryVector v -> binary(v, extension);
            case LargeVarBinaryVector v -> binary(v, extension);
            case ViewVarBinaryVector v -> binary(v, extension);
            case FixedSizeBinaryVector v -> fixedBinary(v, extension);
            case DateDayVector v -> new TemporalEncoders.DateDay(v, new IsoFormat.LastDate());
            case DateMilliVector v -> new TemporalEncoders.DateMilli(v);
            case TimeSecVector v -> time(v, (ArrowType.Time) field.getType());
            case TimeMilliVector v -> time(v, (ArrowType.Time) field.getType());
            case TimeMicroVector v -> time(v, (ArrowType.Time) field.getType());
            case TimeNanoVector v -> time(v, (ArrowType.Time) field.getType());
            case TimeStampVector v -> {
                ArrowType.Timestamp type = (ArrowType.Timestamp) field.getType();
                yield new TemporalEncoders.Timestamp(v, TemporalEncoders.unitsPerSecond(type.getUnit()),
                        type.getTimezone() != null, new IsoFormat.LastDate());
            }
            case IntervalMonthDayNanoVector v -> new TemporalEncoders.MonthDayNano(v);
            case IntervalDayVector v -> new TemporalEncoders.DayTime(v);
            case IntervalYearVector v -> new TemporalEncoders.YearMonth(v);
            case DurationVector v -> new TemporalEncoders.Duration(v,
                    TemporalEncoders.unitsPerSecond(((ArrowType.Duration) field.getType()).getUnit()));
            case MapVector v -> map(column, path, v, field);
            case ListVector v -> new NestedEncoders.ListArray(v, element(column, path, v.getDataVector(), field));
            case LargeListVector v -> new NestedEncoders.LargeListArray(v, element(column, path, v.getDataVector(), field));
            case FixedSizeListVector v -> new NestedEncoders.FixedSizeListArray(v, element(column, path, v.getDataVector(), field));
            case ListViewVector v -> new NestedEncoders.ListViewArray(v, element(column, path, v.getDataVector(), field));
            case LargeListViewVector v -> new NestedEncoders.LargeListViewArray(v, element(column, path, v.getDataVector(), field));
            case NonNullableStructVector v -> struct(column, path, v, field);
            case UnionVector v -> new NestedEncoders.SparseUnion(v,
                    unionMembers(column, path, field, v.getChildrenFromFields()), path);
            case DenseUnionVector v -> new NestedEncoders.DenseUnion(v,
                    unionMembers(column, path, field, v.getChildrenFromFields()), path);
            default -> throw unsupported(column, path, field, extension);
        };
    }

    private ValueEncoder text(VariableWidthFieldVector vector, ArrowExtension extension) {
        return extension.isJson() ? new TextEncoders.RawJson(vector, scratch) : string(vector);
    }

    private ValueEncoder string(VariableWidthFieldVector vector) {
        return vector instanceof VarCharVector plain ? new TextEncoders.Utf8(plain) : new TextEncoders.AnyUtf8(vector, scratch);
    }

    private ValueEncoder binary(VariableWidthFieldVector vector, ArrowExtension extension) {
        String duckDbType = extension.duckDbType();
        if ("bit".equals(duckDbType)) {
            return new TextEncoders.BitString(vector, scratch);
        }
        if ("bignum".equals(duckDbType) || "varint".equals(duckDbType)) {
            return new NumberEncoders.Bignum(vector, scratch);
        }
        return new TextEncoders.Base64(vector, scratch);
    }

    private ValueEncoder fixedBinary(FixedSizeBinaryVector vector, ArrowExtension extension) {
        int width = vector.getByteWidth();
        String duckDbType = extension.duckDbType();
        if (width == 16 && extension.isUuid()) {
            return new TextEncoders.Uuid(vector);
        }
        if (width == 16 && ("hugeint".equals(duckDbType) || "uhugeint".equals(duckDbType))) {
            return new NumberEncoders.Int128(vector, "uhugeint".equals(duckDbType));
        }
        if (width == 8 && "time_tz".equals(duckDbType)) {
            return new TemporalEncoders.TimeTz(vector);
        }
        return new TextEncoders.FixedBase64(vector, scratch);
    }

    private ValueEncoder time(BaseFixedWidthVector vector, ArrowType.Time type) {
        long nanosPerUnit = IsoFormat.NANOS_PER_SECOND / TemporalEncoders.unitsPerSecond(type.getUnit());
        return new TemporalEncoders.Time(vector, nanosPerUnit);
    }

    private ValueEncoder struct(String column, String path, NonNullableStructVector vector, Field struct) {
        List<FieldVector> children = vector.getChildrenFromFields();
        List<String> names = new ArrayList<>();
        ValueEncoder[] fields = new ValueEncoder[children.size()];
        for (int i = 0; i < fields.length; i++) {
            Field field = child(struct, i, children.get(i));
            names.add(field.getName());
            fields[i] = create(column, path + "." + field.getName(), children.get(i), field);
        }
        return new NestedEncoders.Struct(vector, NestedEncoders.memberPrefixes(names), fields);
    }

    private ValueEncoder map(String column, String path, MapVector vector, Field map) {
        FieldVector entries = vector.getDataVector();
        Field entry = child(map, 0, entries);
        List<FieldVector> keyAndValue = entries.getChildrenFromFields();
        FieldVector keys = keyAndValue.get(0);
        Field keyField = child(entry, 0, keys);
        ValueEncoder values = create(column, path + ".value", keyAndValue.get(1), child(entry, 1, keyAndValue.get(1)));
        ValueEncoder stringKeys = stringKeys(keys, keyField);
        if (stringKeys != null) {
            return new NestedEncoders.MapObject(vector, keys, stringKeys, values, path);
        }
        return new NestedEncoders.MapEntries(vector, create(column, path + ".key", keys, keyField), values);
    }

    /**
     * Map keys that are text, directly or through a dictionary (an ENUM key), become the names of a JSON object,
     * written as strings even when marked as JSON. Null for keys of any other type.
     */
    private ValueEncoder stringKeys(FieldVector keys, Field field) {
        DictionaryEncoding encoding = field.getDictionary();
        if (encoding == null) {
            return isText(keys) ? string((VariableWidthFieldVector) keys) : null;
        }
        if (dictionaries == null || !(keys instanceof BaseIntVector indices)) {
            return null;
        }
        Dictionary dictionary = dictionaries.lookup(encoding.getId());
        if (dictionary == null || !isText(dictionary.getVector())) {
            return null;
        }
        bound.add(new BoundDictionary(encoding.getId(), dictionary.getVector()));
        return new NestedEncoders.Dictionary(indices, string((VariableWidthFieldVector) dictionary.getVector()));
    }

    private static boolean isText(ValueVector vector) {
        return vector instanceof VarCharVector || vector instanceof LargeVarCharVector || vector instanceof ViewVarCharVector;
    }

    private ValueEncoder[] unionMembers(String column, String path, Field union, List<FieldVector> members) {
        int[] typeIds = ((ArrowType.Union) union.getType()).getTypeIds();
        // Arrow type ids are 0..127; without explicit ids, a member's id is its position.
        ValueEncoder[] byTypeId = new ValueEncoder[128];
        for (int i = 0; i < members.size(); i++) {
            Field member = child(union, i, members.get(i));
            int typeId = typeIds == null ? i : typeIds[i];
            byTypeId[typeId] = create(column, path + "." + member.getName(), members.get(i), member);
        }
        return byTypeId;
    }

    private ValueEncoder dictionary(String column, String path, FieldVector indices, Field field,
            DictionaryEncoding encoding) {
        if (dictionaries == null) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "Cannot write column \"" + column
                    + "\" as JSON: " + where(column, path) + "is dictionary-encoded (an ENUM) but no dictionary"
                    + " provider was given; pass the ArrowReader to JsonLinesWriter.write(root, dictionaries)");
        }
        Dictionary dictionary = dictionaries.lookup(encoding.getId());
        if (dictionary == null) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "Cannot write column \"" + column
                    + "\" as JSON: " + where(column, path) + "uses dictionary " + encoding.getId()
                    + ", which the dictionary provider does not have");
        }
        if (!(indices instanceof BaseIntVector indexVector)) {
            throw unsupported(column, path, field, ArrowExtension.of(field));
        }
        FieldVector values = dictionary.getVector();
        bound.add(new BoundDictionary(encoding.getId(), values));
        return new NestedEncoders.Dictionary(indexVector, create(column, path, values, values.getField()));
    }

    private static MallardException unsupported(String column, String path, Field field, ArrowExtension extension) {
        String type = field.getType().toString() + (extension.name() == null ? "" : " (extension " + extension.name() + ")");
        return new MallardException(ErrorCode.SYSTEM_INTERNAL, "Cannot write column \"" + column + "\" as JSON: "
                + where(column, path) + "has Arrow type " + type + ", which JsonLinesWriter does not support");
    }

    private static String where(String column, String path) {
        return path.equals(column) ? "it " : "its part " + path + " ";
    }
}
