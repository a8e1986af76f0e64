// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * DuckDB exports ENUM columns dictionary-encoded; the Flight SQL JDBC driver reads such a column's indexes, not its
 * labels. Over Flight, Mallard sends them decoded: the column carries the labels' type (VARCHAR).
 */
final class DictionaryDecoding {
    private DictionaryDecoding() {}

    static boolean needed(Schema schema) {
        return schema.getFields().stream().anyMatch(field -> field.getDictionary() != null);
    }

    /** The schema with every dictionary-encoded field replaced by a field of its dictionary's value type. */
    static Schema decoded(Schema schema, DictionaryProvider dictionaries) {
        List<Field> fields = new ArrayList<>();
        for (Field field : schema.getFields()) {
            if (field.getDictionary() == null) {
                fields.add(field);
            } else {
                Field values = dictionaries.lookup(field.getDictionary().getId()).getVector().getField();
                fields.add(new Field(field.getName(), new FieldType(field.isNullable(), values.getType(), null, field.getMetadata()),
                        values.getChildren()));
            }
        }
        return new Schema(fields, schema.getCustomMetadata());
    }

    /** A root for the decoded schema, to be filled by {@link #fill}. */
    static VectorSchemaRoot target(VectorSchemaRoot source, DictionaryProvider dictionaries, BufferAllocator allocator) {
        return VectorSchemaRoot.create(decoded(source.getSchema(), dictionaries), allocator);
    }

    /** Moves the source's current batch into the target, decoding dictionary-encoded columns; the source is left empty. */
    static void fill(VectorSchemaRoot source, DictionaryProvider dictionaries, VectorSchemaRoot target) {
        for (int i = 0; i < source.getFieldVectors().size(); i++) {
            FieldVector from = source.getVector(i);
            FieldVector to = target.getVector(i);
            if (from.getField().getDictionary() == null) {
                from.makeTransferPair(to).transfer();
            } else {
                Dictionary dictionary = dictionaries.lookup(from.getField().getDictionary().getId());
                try (ValueVector decoded = DictionaryEncoder.decode(from, dictionary)) {
                    decoded.makeTransferPair(to).transfer();
                }
            }
        }
        target.setRowCount(source.getRowCount());
    }
}
