// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * A view's FROM clause as a tree: mentions of base tables joined two at a time. Inner and cross joins are
 * linear in each input; outer, semi and anti joins are kept as such so that {@link FilteredJoin} can split them
 * into inner joins and "no matching row" (or "some matching row") conditions, which it maintains separately.
 */
sealed interface FromNode permits FromNode.Mention, FromNode.Join {
    /** The mention of {@code FilteredJoin.occurrences().get(index)}. */
    record Mention(int index) implements FromNode {}

    /**
     * @param id the join's position in the clause, unique within one view, so a {@link FilteredJoin.Term} can say
     *     which side of which outer join it takes
     * @param condition the ON condition as DuckDB prints it; empty for a cross join
     */
    record Join(int id, Kind kind, FromNode left, FromNode right, Optional<String> condition) implements FromNode {
        public Join {
            requireNonNull(kind, "kind is null");
            requireNonNull(left, "left is null");
            requireNonNull(right, "right is null");
            requireNonNull(condition, "condition is null");
        }
    }

    enum Kind {
        INNER("JOIN"), LEFT("LEFT JOIN"), RIGHT("RIGHT JOIN"), FULL("FULL JOIN"), SEMI("SEMI JOIN"), ANTI("ANTI JOIN");

        private final String keyword;

        Kind(String keyword) {
            this.keyword = keyword;
        }

        String keyword() {
            return keyword;
        }
    }
}
