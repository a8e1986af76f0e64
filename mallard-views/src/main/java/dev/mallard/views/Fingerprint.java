// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.math.BigInteger;
import java.sql.Connection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A cheap summary of a table's rows: how many there are and the sum of their hashes. The sum does not depend on
 * the order of the rows, and a Z-set's fingerprint (each row's hash times its weight) adds to it, so a table's
 * fingerprint after a sync is the one before plus its delta log's. A table whose fingerprint is not what its
 * applied deltas explain was changed where the triggers could not see it.
 *
 * @param rows the number of rows
 * @param hash the sum of {@code hash(columns...)} over the rows, as HUGEINT (no overflow below 2^63 rows)
 */
record Fingerprint(long rows, BigInteger hash) {
    Fingerprint {
        requireNonNull(hash, "hash is null");
    }

    /** The fingerprint of the table's rows over the columns its triggers capture. */
    static Fingerprint of(Connection connection, TableName table, List<String> columns) {
        String hashed = columns.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
        return parse(Sql.strings(connection, "SELECT count(*) || ',' || coalesce(sum(hash(" + hashed + ")::HUGEINT), 0) FROM "
                + table.sql()).get(0));
    }

    /** A query with one row: {@code delta_rows} and {@code delta_hash} of the table's delta log, weighted. */
    static String ofDeltaQuery(TableName table) {
        return "SELECT " + deltaRows() + " AS delta_rows, " + deltaHash() + " AS delta_hash FROM " + table.deltaTable();
    }

    /** {@code delta_rows,delta_hash} of the table's delta log as one VARCHAR expression, for a query over the log. */
    static String ofDeltaText() {
        return deltaRows() + " || ',' || " + deltaHash();
    }

    static Fingerprint ofDelta(Connection connection, TableName table) {
        return parse(Sql.strings(connection, "SELECT " + ofDeltaText() + " FROM " + table.deltaTable()).get(0));
    }

    /** The rows a delta log adds: the sum of its weights. */
    private static String deltaRows() {
        return "CAST(coalesce(sum(" + FilteredJoin.WEIGHT + "), 0) AS BIGINT)";
    }

    /** The hash sum a delta log adds: each row's hash times its weight. */
    private static String deltaHash() {
        String w = FilteredJoin.WEIGHT;
        return "coalesce(sum(hash(*COLUMNS(* EXCLUDE (" + w + ")))::HUGEINT * " + w + "), 0)";
    }

    static Fingerprint parse(String text) {
        String[] parts = text.split(",", 2);
        return new Fingerprint(Long.parseLong(parts[0]), new BigInteger(parts[1]));
    }

    Fingerprint plus(Fingerprint other) {
        return new Fingerprint(rows + other.rows, hash.add(other.hash));
    }

    Fingerprint minus(Fingerprint other) {
        return new Fingerprint(rows - other.rows, hash.subtract(other.hash));
    }
}
