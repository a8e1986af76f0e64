// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The encoders for one {@link VectorSchemaRoot}: one per column, with the column names pre-encoded. Encoders
 * hold the vectors themselves, which an {@code ArrowReader} reuses from batch to batch, so one RowEncoder
 * serves every batch of a reader; {@link #isBoundTo} tells when it no longer applies.
 */
final class RowEncoder {
    private static final byte[] END = {'}', '\n'};
    private static final byte[] EMPTY_END = {'{', '}', '\n'};

    private final VectorSchemaRoot root;
    private final DictionaryProvider dictionaries;
    private final List<FieldVector> vectors;
    private final List<EncoderFactory.BoundDictionary> boundDictionaries;
    private final byte[][] prefixes;
    private final ValueEncoder[] columns;

    RowEncoder(VectorSchemaRoot root, DictionaryProvider dictionaries, Scratch scratch, JsonLinesWriter.Decimals decimals) {
        this.root = requireNonNull(root, "root is null");
        this.dictionaries = dictionaries;
        this.vectors = List.copyOf(root.getFieldVectors());
        List<Field> fields = root.getSchema().getFields();
        EncoderFactory factory = new EncoderFactory(dictionaries, scratch, decimals);
        List<String> names = new ArrayList<>();
        columns = new ValueEncoder[vectors.size()];
        for (int i = 0; i < columns.length; i++) {
            names.add(fields.get(i).getName());
            columns[i] = factory.create(vectors.get(i), fields.get(i));
        }
        prefixes = NestedEncoders.memberPrefixes(names);
        boundDictionaries = factory.boundDictionaries();
    }

    /** Whether this encoder reads exactly the vectors {@code root} and {@code provider} hold now. */
    boolean isBoundTo(VectorSchemaRoot root, DictionaryProvider provider) {
        if (root != this.root || provider != dictionaries) {
            return false;
        }
        List<FieldVector> current = root.getFieldVectors();
        if (current.size() != vectors.size()) {
            return false;
        }
        for (int i = 0; i < vectors.size(); i++) {
            if (current.get(i) != vectors.get(i)) {
                return false;
            }
        }
        for (EncoderFactory.BoundDictionary bound : boundDictionaries) {
            Dictionary dictionary = provider.lookup(bound.id());
            if (dictionary == null || dictionary.getVector() != bound.vector()) {
                return false;
            }
        }
        return true;
    }

    void write(JsonOutput out, int row) throws IOException {
        for (int i = 0; i < columns.length; i++) {
            out.append(prefixes[i]);
            columns[i].write(out, row);
        }
        out.append(columns.length == 0 ? EMPTY_END : END);
    }
}
