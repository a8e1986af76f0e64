// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;

/** A result set as a JSON array of objects, one per row, keyed by column label. */
final class JsonRows {
    private static final JsonFactory JSON = new JsonFactory();

    private JsonRows() {}

    /** @throws MallardException {@code user.dataset.too_many_rows} past {@code maxRows} */
    static DatasetCache.Rows write(ResultSet rows, int maxRows, String dataset, long startedNanos) throws SQLException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        long count = 0;
        try (JsonGenerator json = JSON.createGenerator(out)) {
            ResultSetMetaData meta = rows.getMetaData();
            int columns = meta.getColumnCount();
            String[] labels = new String[columns];
            for (int i = 0; i < columns; i++) {
                labels[i] = meta.getColumnLabel(i + 1);
            }
            json.writeStartArray();
            while (rows.next()) {
                if (++count > maxRows) {
                    throw new MallardException(ErrorCode.USER_DATASET_TOO_MANY_ROWS, "dataset " + dataset + " answers more than " + maxRows
                            + " rows (serve.max_rows); narrow the request or raise max_rows");
                }
                json.writeStartObject();
                for (int i = 0; i < columns; i++) {
                    json.writeFieldName(labels[i]);
                    value(json, rows.getObject(i + 1));
                }
                json.writeEndObject();
            }
            json.writeEndArray();
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot write a dataset answer: " + e.getMessage(), e);
        }
        return new DatasetCache.Rows(out.toByteArray(), count, startedNanos);
    }

    private static void value(JsonGenerator json, Object value) throws IOException {
        switch (value) {
            case null -> json.writeNull();
            case Boolean b -> json.writeBoolean(b);
            case Integer i -> json.writeNumber(i);
            case Long l -> json.writeNumber(l);
            case Short s -> json.writeNumber(s);
            case Byte b -> json.writeNumber(b);
            case Double d -> {
                if (d.isNaN() || d.isInfinite()) {
                    json.writeString(d.toString());
                } else {
                    json.writeNumber(d);
                }
            }
            case Float f -> json.writeNumber(f);
            case BigDecimal d -> json.writeNumber(d);
            case BigInteger i -> json.writeNumber(i);
            case java.sql.Timestamp t -> json.writeString(t.toLocalDateTime().toString());
            case java.sql.Date d -> json.writeString(d.toLocalDate().toString());
            default -> json.writeString(value.toString());
        }
    }
}
