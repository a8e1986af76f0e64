// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * One aggregate call of a view, with the state columns that carry it across syncs (slot index i):
 * SUM and AVG keep {@code s_i} (the sum of non-NULL arguments) and {@code n_i} (how many there are);
 * COUNT keeps {@code n_i}; COUNT(*) reads the group's row count; MIN and MAX keep {@code m_i}.
 *
 * <p>With DISTINCT (SUM, COUNT, AVG), {@code s_i} and {@code n_i} are the sum and count of the group's distinct
 * non-NULL values, kept by a second state table with each value's number of copies per group (see
 * {@link AggregateProgram}).
 *
 * <p>SUM, AVG and COUNT of one argument (without DISTINCT) share their state columns: {@code storage} is the index
 * of the first such slot, whose {@code s} and {@code n} columns the later ones read (views of catalog layout 2 on;
 * see {@link ViewRegistry#LAYOUT}).
 *
 * @param argument the argument's SQL over the view's FROM aliases, empty for COUNT(*)
 * @param storage the index whose state columns the slot keeps: its own, or an earlier slot's it shares
 */
record AggregateSlot(Kind kind, Optional<String> argument, int index, boolean distinct, int storage) {
    enum Kind { SUM, COUNT, COUNT_STAR, AVG, MIN, MAX }

    AggregateSlot {
        requireNonNull(kind, "kind is null");
        requireNonNull(argument, "argument is null");
        if (distinct && !(kind == Kind.SUM || kind == Kind.COUNT || kind == Kind.AVG)) {
            throw new IllegalArgumentException("DISTINCT is kept for SUM, COUNT and AVG only, not " + kind);
        }
    }

    AggregateSlot(Kind kind, Optional<String> argument, int index, boolean distinct) {
        this(kind, argument, index, distinct, index);
    }

    AggregateSlot(Kind kind, Optional<String> argument, int index) {
        this(kind, argument, index, false);
    }

    /** Whether this slot may keep its state in the columns of {@code other}: a sum and a count of the same argument. */
    boolean sharesStateWith(Kind otherKind, Optional<String> otherArgument, boolean otherDistinct) {
        return !distinct && !otherDistinct && keepsCount() && (otherKind == Kind.SUM || otherKind == Kind.AVG || otherKind == Kind.COUNT)
                && argument.equals(otherArgument);
    }

    String argumentColumn() {
        return "a" + index;
    }

    String sum() {
        return "s" + storage;
    }

    String count() {
        return "n" + storage;
    }

    String extreme() {
        return "m" + index;
    }

    boolean keepsSum() {
        return kind == Kind.SUM || kind == Kind.AVG;
    }

    boolean keepsCount() {
        return kind == Kind.SUM || kind == Kind.AVG || kind == Kind.COUNT;
    }

    boolean isExtreme() {
        return kind == Kind.MIN || kind == Kind.MAX;
    }

    String extremeFunction() {
        return kind == Kind.MIN ? "min" : "max";
    }

    /** How MIN/MAX move under inserts only: the smaller (larger) of the old value and the inserted ones. */
    String extremeCombiner() {
        return kind == Kind.MIN ? "least" : "greatest";
    }

    /** The aggregate's value in terms of the state columns, as DuckDB's own aggregate would return it. */
    String output() {
        return switch (kind) {
            case SUM -> "CASE WHEN " + count() + " > 0 THEN " + sum() + " END";
            case COUNT -> "CAST(" + count() + " AS BIGINT)";
            case COUNT_STAR -> "CAST(" + AggregateProgram.COUNT + " AS BIGINT)";
            case AVG -> "CASE WHEN " + count() + " > 0 THEN CAST(" + sum() + " AS DOUBLE) / " + count() + " END";
            case MIN, MAX -> extreme();
        };
    }
}
