// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import dev.mallard.server.arrow.ArrowValues;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Writes Arrow batches as tab-separated values: a header row of column names, then one line per row. NULL is an
 * empty field; a tab, newline, carriage return or backslash inside a value is escaped as {@code \t}, {@code \n},
 * {@code \r}, {@code \\}. Temporal values are ISO-8601 with seconds always present, timestamps with a time zone
 * in UTC; BLOBs are base64; DECIMALs keep their scale.
 */
public final class TsvWriter {
    private final Writer out;
    private boolean headerWritten;

    public TsvWriter(OutputStream out) {
        this.out = new BufferedWriter(new OutputStreamWriter(requireNonNull(out, "out is null"), StandardCharsets.UTF_8), 1 << 16);
    }

    public void writeHeader(List<Field> fields) throws IOException {
        if (headerWritten) {
            return;
        }
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                out.write('\t');
            }
            escape(fields.get(i).getName());
        }
        out.write('\n');
        headerWritten = true;
    }

    public void write(VectorSchemaRoot root, DictionaryProvider dictionaries) throws IOException {
        writeHeader(root.getSchema().getFields());
        List<FieldVector> vectors = root.getFieldVectors();
        String[][] nested = new String[vectors.size()][];
        for (int column = 0; column < vectors.size(); column++) {
            if (vectors.get(column).getField().getType().isComplex()) {
                nested[column] = asJson(vectors.get(column), root.getRowCount(), dictionaries);
            }
        }
        for (int row = 0; row < root.getRowCount(); row++) {
            for (int column = 0; column < vectors.size(); column++) {
                if (column > 0) {
                    out.write('\t');
                }
                if (nested[column] != null) {
                    if (!vectors.get(column).isNull(row)) {
                        escape(nested[column][row]);
                    }
                    continue;
                }
                Object value = value(vectors.get(column), row, dictionaries);
                if (value != null) {
                    escape(text(value));
                }
            }
            out.write('\n');
        }
    }

    /**
     * A LIST, STRUCT, MAP or UNION column's values as JSON, written as the JSON lines answer writes them (dates as
     * ISO text, decimals as exact numbers), one string per row.
     */
    private static String[] asJson(FieldVector vector, int rows, DictionaryProvider dictionaries) throws IOException {
        Field field = vector.getField();
        Field named = new Field(NESTED, field.getFieldType(), field.getChildren());
        // A view of the vector, not closed: the vector stays the root's.
        VectorSchemaRoot one = new VectorSchemaRoot(List.of(named), List.of(vector), rows);
        java.io.ByteArrayOutputStream json = new java.io.ByteArrayOutputStream();
        dev.mallard.core.arrow.JsonLinesWriter writer = new dev.mallard.core.arrow.JsonLinesWriter(json, dev.mallard.core.arrow.JsonLinesWriter.Decimals.NUMBERS);
        writer.write(one, dictionaries);
        writer.flush();
        String[] lines = json.toString(StandardCharsets.UTF_8).split("\n", -1);
        String[] values = new String[rows];
        int prefix = NESTED.length() + 4; // {"v":
        for (int row = 0; row < rows; row++) {
            values[row] = lines[row].substring(prefix, lines[row].length() - 1);
        }
        return values;
    }

    private static final String NESTED = "v";

    public void flush() throws IOException {
        out.flush();
    }

    private static Object value(FieldVector vector, int row, DictionaryProvider dictionaries) {
        if (vector.isNull(row)) {
            return null;
        }
        DictionaryEncoding encoding = vector.getField().getDictionary();
        if (encoding != null && dictionaries != null) {
            Dictionary dictionary = dictionaries.lookup(encoding.getId());
            Object index = vector.getObject(row);
            ValueVector labels = dictionary.getVector();
            return labels.getObject(((Number) index).intValue());
        }
        return ArrowValues.value(vector, row);
    }

    private static String text(Object value) {
        return switch (value) {
            case byte[] bytes -> java.util.Base64.getEncoder().encodeToString(bytes);
            case java.math.BigDecimal decimal -> decimal.toPlainString();
            case java.time.LocalDateTime stamp -> DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(stamp);
            case java.time.OffsetDateTime stamp -> DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(stamp);
            case java.time.LocalTime time -> DateTimeFormatter.ISO_LOCAL_TIME.format(time);
            default -> value.toString();
        };
    }

    private void escape(String text) throws IOException {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\t' -> out.write("\\t");
                case '\n' -> out.write("\\n");
                case '\r' -> out.write("\\r");
                case '\\' -> out.write("\\\\");
                default -> out.write(c);
            }
        }
    }
}
