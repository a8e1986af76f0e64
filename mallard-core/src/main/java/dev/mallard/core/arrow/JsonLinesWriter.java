// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Writes Arrow record batches as JSON lines: one compact JSON object per row, keys the column names in schema
 * order, each followed by {@code '\n'}, in UTF-8.
 *
 * <p>Values are encoded as follows.
 * <ul>
 *   <li>Integers of every width, signed or unsigned, HUGEINT and UHUGEINT included (what {@code sum} of a
 *       BIGINT column returns), are numbers of their exact digits; booleans are {@code true}/{@code false}, also
 *       when DuckDB exports them as {@code arrow.bool8}; NULL is {@code null}, at any depth.
 *   <li>FLOAT and DOUBLE are numbers, except NaN and the infinities, which are the strings {@code "NaN"},
 *       {@code "Infinity"} and {@code "-Infinity"}.
 *   <li>DECIMAL of any precision and BIGNUM are strings of their exact digits
 *       ({@code "1.50"} for DECIMAL(10,2) 1.5), so no JSON reader rounds them; with {@link Decimals#NUMBERS}
 *       DECIMAL is a JSON number of the same exact digits ({@code 1.50}), as DazzleDuck's HTTP API writes it.
 *   <li>VARCHAR is a string. A field marked as JSON (extension {@code arrow.json}) is embedded as raw JSON.
 *       DuckDB marks JSON columns only when {@code arrow_lossless_conversion} is set (see
 *       {@link ArrowExport#LOSSLESS_SETTING}); otherwise it exports them as plain VARCHAR and they are strings.
 *   <li>BLOB and other binary values are base64 strings. UUID is its canonical string, whether DuckDB exports it
 *       as text or as {@code arrow.uuid}. BIT (under lossless conversion) is a string of 0s and 1s. ENUM is its
 *       label.
 *   <li>DATE is {@code "2020-01-31"}; TIME is {@code "12:00:01"} with a fraction when not zero; TIMESTAMP is
 *       {@code "2015-12-12T19:11:01.249"}; TIMESTAMPTZ is the instant in UTC, {@code "2015-12-12T19:11:01.249Z"};
 *       seconds are always present and fractions come in groups of three digits, as in {@code java.time}.
 *       TIMETZ (under lossless conversion) is {@code "12:00:00+01:00"}. Infinite dates and timestamps are
 *       {@code "infinity"} and {@code "-infinity"}.
 *   <li>INTERVAL is an ISO-8601 duration such as {@code "P1Y2M3DT4H5M6.5S"}: months split into years and months,
 *       days kept as days, each component with its own sign, {@code "PT0S"} for zero.
 *   <li>LIST, ARRAY are arrays; STRUCT is an object; MAP is an object when its keys are text, otherwise an array of
 *       {@code {"key":...,"value":...}} objects; UNION is its active member's value.
 * </ul>
 * An Arrow type outside these rules fails the first batch with {@code system.internal}, before any row is written.
 *
 * <p>The encoders for a schema are built on its first batch and reused while the batches come from the same
 * root, so the per-row work is reading vectors and copying bytes. Output is buffered: call {@link #flush()} to
 * push it to the stream, which this writer never closes. Not thread-safe.
 */
public final class JsonLinesWriter {
    private final JsonOutput output;
    private final Scratch scratch = new Scratch();
    private final Decimals decimals;
    private RowEncoder encoder;

    /** How DECIMAL values (HUGEINT too, which DuckDB's standard Arrow export turns into DECIMAL(38,0)) are written. */
    public enum Decimals {
        /** Strings of their exact digits: {@code "1.50"}. */
        STRINGS,
        /** Numbers of their exact digits: {@code 1.50}; a reader that parses numbers as doubles may round them. */
        NUMBERS
    }

    public JsonLinesWriter(OutputStream out) {
        this(out, Decimals.STRINGS);
    }

    public JsonLinesWriter(OutputStream out, Decimals decimals) {
        output = new JsonOutput(requireNonNull(out, "out is null"));
        this.decimals = requireNonNull(decimals, "decimals is null");
    }

    /**
     * Writes every row of the batch.
     *
     * @return the number of rows written
     * @throws dev.mallard.core.error.MallardException if a column has a type this writer cannot encode, or is
     *     dictionary-encoded (use {@link #write(VectorSchemaRoot, DictionaryProvider)})
     */
    public long write(VectorSchemaRoot root) throws IOException {
        return write(root, null);
    }

    /**
     * Writes every row of the batch, resolving dictionary-encoded columns (DuckDB's ENUM) through
     * {@code dictionaries}, typically the {@link ArrowReader} that loaded the batch.
     *
     * @param dictionaries the dictionary provider, or null when no column is dictionary-encoded
     * @return the number of rows written
     */
    public long write(VectorSchemaRoot root, DictionaryProvider dictionaries) throws IOException {
        RowEncoder rows = encoderFor(requireNonNull(root, "root is null"), dictionaries);
        int count = root.getRowCount();
        try {
            for (int row = 0; row < count; row++) {
                rows.write(output, row);
            }
        } catch (UncheckedIOException e) {
            // JsonOutput's small appends drain through an unchecked wrapper; give callers the IOException.
            throw e.getCause();
        }
        return count;
    }

    /**
     * Writes every batch the reader has left and flushes. The reader stays open; the caller closes it.
     *
     * @return the number of rows written
     */
    public long writeAll(ArrowReader reader) throws IOException {
        requireNonNull(reader, "reader is null");
        // Check the schema before the first batch, so an unsupported type fails even for an empty result.
        encoderFor(reader.getVectorSchemaRoot(), reader);
        long total = 0;
        while (reader.loadNextBatch()) {
            total += write(reader.getVectorSchemaRoot(), reader);
        }
        flush();
        return total;
    }

    /** Writes buffered output to the stream and flushes the stream. */
    public void flush() throws IOException {
        output.flush();
    }

    private RowEncoder encoderFor(VectorSchemaRoot root, DictionaryProvider dictionaries) {
        if (encoder == null || !encoder.isBoundTo(root, dictionaries)) {
            encoder = new RowEncoder(root, dictionaries, scratch, decimals);
        }
        return encoder;
    }
}
