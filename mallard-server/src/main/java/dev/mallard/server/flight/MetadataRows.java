// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.types.pojo.Schema;

/** Sends a small metadata result (catalogs, schemas, tables, keys) as one batch of a Flight SQL schema. */
final class MetadataRows {
    private MetadataRows() {}

    /** Each row holds one value per field of {@code schema}: String, byte[], Integer, Boolean, a List of strings, or null. */
    static void send(Schema schema, List<List<Object>> rows, BufferAllocator allocator, ServerStreamListener listener) {
        try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
            root.allocateNew();
            for (int row = 0; row < rows.size(); row++) {
                List<Object> values = rows.get(row);
                for (int column = 0; column < schema.getFields().size(); column++) {
                    set(root.getVector(column), row, values.get(column));
                }
            }
            root.setRowCount(rows.size());
            listener.start(root);
            listener.putNext();
            listener.completed();
        }
    }

    private static void set(FieldVector vector, int row, Object value) {
        if (value == null) {
            vector.setNull(row);
            return;
        }
        switch (vector) {
            case VarCharVector text -> text.setSafe(row, value.toString().getBytes(StandardCharsets.UTF_8));
            case VarBinaryVector bytes -> bytes.setSafe(row, (byte[]) value);
            case IntVector ints -> ints.setSafe(row, ((Number) value).intValue());
            case BitVector bits -> bits.setSafe(row, (Boolean) value ? 1 : 0);
            case ListVector list -> {
                UnionListWriter writer = list.getWriter();
                writer.setPosition(row);
                writer.startList();
                for (Object item : (List<?>) value) {
                    writer.writeVarChar(item.toString());
                }
                writer.endList();
            }
            default -> throw new IllegalStateException("metadata column " + vector.getField() + " has no writer");
        }
    }
}
