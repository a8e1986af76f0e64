// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * The FROM and WHERE of a view, and the Z-set delta of its rows.
 *
 * <p>Inner joins: with n table mentions whose deltas are d_i and whose current (post-change) contents are
 * T_i, the change of the join is the sum over non-empty sets S of changed mentions of
 * (-1)^(|S|+1) x (the join with d_i for i in S and T_j elsewhere).
 *
 * <p>Outer, semi and anti joins are split into terms (DBSP: an outer join is the inner join plus the
 * antijoin's rows padded with NULLs). {@code A LEFT JOIN B ON c} is the term {@code A JOIN B ON c} plus the
 * term {@code A x (NULLs for B)} restricted to rows of A for which B has no row satisfying c. Each term is an
 * inner join J of the mentions it keeps, times indicators f ("no row of R matches", or "some row does") for
 * its {@link Requirement}s. Its change is {@code dJ x f_before + J_now x (f_now - f_before)}: the inner-join
 * delta filtered by the requirements as they held before the change, plus the current rows whose requirement
 * flipped, which can only be rows matching a changed row of R. The count of matches before the change is the
 * count now minus the sum of the weights of R's delta rows that match.
 *
 * @param requirements {@code [NOT] EXISTS} conditions that the WHERE clause ANDs to {@code where}
 */
record FilteredJoin(FromNode from, List<TableOccurrence> occurrences, Optional<String> where, List<Requirement> requirements) {
    static final String WEIGHT = "mallard_w";

    /** Which side of an outer join a term takes: both (matched), or one side with the other padded with NULLs. */
    enum Side { MATCHED, LEFT_ONLY, RIGHT_ONLY }

    /**
     * A condition on another relation, per row of the outer one: that {@code inner} (whose WHERE refers to the
     * outer row) has no row ({@code absent}), or has some; it holds anyway for an outer row where
     * {@code unless} (never NULL) is true.
     *
     * @param correlated whether {@code inner} refers to the outer row (false: it has one answer for all rows)
     */
    record Requirement(FilteredJoin inner, boolean absent, Optional<String> unless, boolean correlated) {
        Requirement {
            requireNonNull(inner, "inner is null");
            requireNonNull(unless, "unless is null");
        }

        Requirement(FilteredJoin inner, boolean absent) {
            this(inner, absent, Optional.empty(), true);
        }

        String countNow() {
            return "(SELECT count(*) FROM (" + inner.current(List.of()) + ") AS mallard_r)";
        }

        String countBefore(Set<TableName> changed) {
            if (!moves(changed)) {
                return countNow();
            }
            return "(" + countNow() + " - (SELECT coalesce(sum(" + WEIGHT + "), 0) FROM (" + inner.delta(List.of(), changed)
                    + ") AS mallard_r))";
        }

        /**
         * A condition that every outer row whose requirement flipped meets: a changed row of {@code inner}
         * matches it; or, when {@code inner} does not depend on the outer row, its indicator flipped at all
         * (computed once, so a change that flips nothing costs no pass over the outer rows).
         */
        String touchedBy(Set<TableName> changed) {
            if (!correlated) {
                String holds = absent ? " = 0" : " > 0";
                return "(" + countNow() + holds + ") <> (" + countBefore(changed) + holds + ")";
            }
            return "EXISTS (" + inner.delta(List.of(), changed) + ")";
        }

        boolean moves(Set<TableName> changed) {
            return inner.tables().stream().anyMatch(changed::contains);
        }

        String holds(String count) {
            String holds = count + (absent ? " = 0" : " > 0");
            return unless.map(u -> "(" + u + ") OR " + holds).orElse(holds);
        }
    }

    FilteredJoin {
        requireNonNull(from, "from is null");
        occurrences = List.copyOf(occurrences);
        requireNonNull(where, "where is null");
        requirements = List.copyOf(requirements);
    }

    FilteredJoin(FromNode from, List<TableOccurrence> occurrences, Optional<String> where) {
        this(from, occurrences, where, List.of());
    }

    /** The distinct base tables the rows depend on, in first-mention order. */
    List<TableName> tables() {
        Set<TableName> tables = new LinkedHashSet<>();
        mentions(from, tables);
        requirements.forEach(r -> tables.addAll(r.inner().tables()));
        return List.copyOf(tables);
    }

    private void mentions(FromNode node, Set<TableName> tables) {
        switch (node) {
            case FromNode.Mention m -> tables.addAll(occurrences.get(m.index()).tables());
            case FromNode.Join j -> {
                mentions(j.left(), tables);
                mentions(j.right(), tables);
            }
        }
    }

    /** The mentions whose columns the SELECT list sees: all but the right sides of semi and anti joins. */
    List<TableOccurrence> visible() {
        List<TableOccurrence> visible = new ArrayList<>();
        visible(from, visible);
        return visible;
    }

    private void visible(FromNode node, List<TableOccurrence> visible) {
        switch (node) {
            case FromNode.Mention m -> visible.add(occurrences.get(m.index()));
            case FromNode.Join j -> {
                visible(j.left(), visible);
                if (j.kind() != FromNode.Kind.SEMI && j.kind() != FromNode.Kind.ANTI) {
                    visible(j.right(), visible);
                }
            }
        }
    }

    /** The current rows: {@code SELECT columns, 1 AS mallard_w FROM tables WHERE filter}. */
    String current(List<String> columns) {
        List<String> filters = new ArrayList<>();
        where.ifPresent(filters::add);
        requirements.forEach(r -> filters.add(r.holds(r.countNow())));
        return select(columns, "1", render(from, null, this::table, false), filters);
    }

    /**
     * The rows with each mention read from {@code relation} (a FROM item per mention index) instead of its
     * table, weighted by {@code weight} and filtered by the WHERE clause; for a source of inner joins with no
     * requirements (see {@link #innerOnly}).
     */
    String reading(List<String> columns, String weight, IntFunction<String> relation) {
        return select(columns, weight, render(from, null, relation, false), where.map(List::of).orElse(List.of()));
    }

    /** The same FROM and requirements with {@code condition} AND-ed to the WHERE clause. */
    FilteredJoin restricted(String condition) {
        return new FilteredJoin(from, occurrences, Optional.of(where.map(w -> "(" + w + ") AND (" + condition + ")").orElse(condition)),
                requirements);
    }

    /** Whether the rows are inner joins of base tables with a WHERE clause only: monotone in every table. */
    boolean innerOnly() {
        return requirements.isEmpty() && occurrences.stream().allMatch(o -> o.table().isPresent()) && innerJoins(from);
    }

    private static boolean innerJoins(FromNode node) {
        return switch (node) {
            case FromNode.Mention m -> true;
            case FromNode.Join j -> j.kind() == FromNode.Kind.INNER && innerJoins(j.left()) && innerJoins(j.right());
        };
    }

    /** The delta of the rows since the last sync, given the tables whose logs hold changes. */
    String delta(List<String> columns, Set<TableName> changed) {
        List<String> parts = new ArrayList<>();
        for (Map<Integer, Side> term : terms(from)) {
            parts.addAll(termDelta(term, columns, changed));
        }
        if (parts.isEmpty()) {
            // Keeps the statement valid (and typed) when none of the view's tables changed.
            return current(columns) + " LIMIT 0";
        }
        return String.join("\nUNION ALL\n", parts);
    }

    private List<String> termDelta(Map<Integer, Side> term, List<String> columns, Set<TableName> changed) {
        List<Integer> present = new ArrayList<>();
        List<Requirement> required = new ArrayList<>(requirements);
        collect(from, term, present, required);
        List<Integer> moving = present.stream().filter(i -> occurrences.get(i).changed(changed)).toList();
        List<String> before = new ArrayList<>();
        where.ifPresent(before::add);
        required.forEach(r -> before.add(r.holds(r.countBefore(changed))));
        List<String> parts = new ArrayList<>();
        for (int mask = 1; mask < (1 << moving.size()); mask++) {
            Set<Integer> subset = new LinkedHashSet<>();
            for (int bit = 0; bit < moving.size(); bit++) {
                if ((mask & (1 << bit)) != 0) {
                    subset.add(moving.get(bit));
                }
            }
            String weight = subset.stream()
                    .map(i -> SqlText.identifier(occurrences.get(i).alias()) + "." + WEIGHT)
                    .collect(Collectors.joining(" * "));
            if (subset.size() % 2 == 0) {
                weight = "-(" + weight + ")";
            }
            IntFunction<String> relation = i -> subset.contains(i) ? occurrences.get(i).delta(changed) : table(i);
            parts.add(select(columns, weight, render(from, term, relation, false), before));
        }
        if (required.stream().anyMatch(r -> r.moves(changed))) {
            String now = indicator(required.stream().map(r -> r.holds(r.countNow())).toList());
            String then = indicator(required.stream().map(r -> r.holds(r.countBefore(changed))).toList());
            List<String> flipped = new ArrayList<>();
            where.ifPresent(flipped::add);
            // Only a row matching a changed row of some R can flip; testing that first (a join with the small
            // delta) keeps DuckDB from counting matches for every current row.
            flipped.add(required.stream().filter(r -> r.moves(changed)).map(r -> r.touchedBy(changed))
                    .collect(Collectors.joining(" OR ")));
            flipped.add(now + " <> " + then);
            parts.add(select(columns, now + " - " + then, render(from, term, this::table, false), flipped));
        }
        return parts;
    }

    private static String indicator(List<String> conditions) {
        return "(CASE WHEN " + conditions.stream().map(c -> "(" + c + ")").collect(Collectors.joining(" AND "))
                + " THEN 1 ELSE 0 END)";
    }

    /** Every combination of sides the outer, semi and anti joins can take, each an inner-join shape. */
    private static List<Map<Integer, Side>> terms(FromNode node) {
        return switch (node) {
            case FromNode.Mention m -> List.of(Map.of());
            case FromNode.Join j -> {
                List<Map<Integer, Side>> terms = new ArrayList<>();
                List<Map<Integer, Side>> left = terms(j.left());
                List<Map<Integer, Side>> right = terms(j.right());
                switch (j.kind()) {
                    case INNER -> terms.addAll(product(left, right, j.id(), Side.MATCHED));
                    case LEFT -> {
                        terms.addAll(product(left, right, j.id(), Side.MATCHED));
                        terms.addAll(with(left, j.id(), Side.LEFT_ONLY));
                    }
                    case RIGHT -> {
                        terms.addAll(product(left, right, j.id(), Side.MATCHED));
                        terms.addAll(with(right, j.id(), Side.RIGHT_ONLY));
                    }
                    case FULL -> {
                        terms.addAll(product(left, right, j.id(), Side.MATCHED));
                        terms.addAll(with(left, j.id(), Side.LEFT_ONLY));
                        terms.addAll(with(right, j.id(), Side.RIGHT_ONLY));
                    }
                    case SEMI, ANTI -> terms.addAll(with(left, j.id(), Side.LEFT_ONLY));
                }
                yield terms;
            }
        };
    }

    private static List<Map<Integer, Side>> product(List<Map<Integer, Side>> left, List<Map<Integer, Side>> right, int id,
            Side side) {
        List<Map<Integer, Side>> terms = new ArrayList<>();
        for (Map<Integer, Side> l : left) {
            for (Map<Integer, Side> r : right) {
                Map<Integer, Side> term = new HashMap<>(l);
                term.putAll(r);
                term.put(id, side);
                terms.add(term);
            }
        }
        return terms;
    }

    private static List<Map<Integer, Side>> with(List<Map<Integer, Side>> terms, int id, Side side) {
        List<Map<Integer, Side>> out = new ArrayList<>();
        for (Map<Integer, Side> t : terms) {
            Map<Integer, Side> term = new HashMap<>(t);
            term.put(id, side);
            out.add(term);
        }
        return out;
    }

    /** The term's kept mentions and the requirements its one-sided joins add. */
    private void collect(FromNode node, Map<Integer, Side> term, List<Integer> present, List<Requirement> required) {
        switch (node) {
            case FromNode.Mention m -> present.add(m.index());
            case FromNode.Join j -> {
                Side side = term.get(j.id());
                switch (side) {
                    case MATCHED -> {
                        collect(j.left(), term, present, required);
                        collect(j.right(), term, present, required);
                    }
                    case LEFT_ONLY -> {
                        collect(j.left(), term, present, required);
                        required.add(new Requirement(new FilteredJoin(j.right(), occurrences, j.condition()),
                                j.kind() != FromNode.Kind.SEMI));
                    }
                    case RIGHT_ONLY -> {
                        collect(j.right(), term, present, required);
                        required.add(new Requirement(new FilteredJoin(j.left(), occurrences, j.condition()), true));
                    }
                }
            }
        }
    }

    /**
     * The FROM clause: as written when {@code term} is null; otherwise the term's inner-join shape, where a
     * padded side is one row of NULLs under the same aliases (so the SELECT list and WHERE read NULLs there
     * as the outer join would give them) and the right side of a semi or anti join is left out.
     */
    private String render(FromNode node, Map<Integer, Side> term, IntFunction<String> relation, boolean padded) {
        return switch (node) {
            case FromNode.Mention m -> {
                TableOccurrence occurrence = occurrences.get(m.index());
                String alias = SqlText.identifier(occurrence.alias());
                yield padded
                        ? "(SELECT " + alias + ".* FROM (SELECT 1) AS mallard_one LEFT JOIN " + occurrence.now()
                                + " AS " + alias + " ON FALSE) AS " + alias
                        : relation.apply(m.index()) + " AS " + alias;
            }
            case FromNode.Join j -> {
                if (padded) {
                    yield "(" + render(j.left(), term, relation, true) + " CROSS JOIN " + render(j.right(), term, relation, true) + ")";
                }
                Side side = term == null ? null : term.get(j.id());
                if (side == Side.LEFT_ONLY) {
                    if (j.kind() == FromNode.Kind.SEMI || j.kind() == FromNode.Kind.ANTI) {
                        yield render(j.left(), term, relation, false);
                    }
                    yield "(" + render(j.left(), term, relation, false) + " CROSS JOIN " + render(j.right(), term, relation, true) + ")";
                }
                if (side == Side.RIGHT_ONLY) {
                    yield "(" + render(j.left(), term, relation, true) + " CROSS JOIN " + render(j.right(), term, relation, false) + ")";
                }
                String keyword = side == null ? j.kind().keyword() : "JOIN";
                if (j.condition().isEmpty()) {
                    keyword = "CROSS JOIN";
                }
                yield "(" + render(j.left(), term, relation, false) + " " + keyword + " " + render(j.right(), term, relation, false)
                        + j.condition().map(c -> " ON " + c).orElse("") + ")";
            }
        };
    }

    private String table(int index) {
        return occurrences.get(index).now();
    }

    private String select(List<String> columns, String weight, String fromClause, List<String> filters) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (String column : columns) {
            sql.append(column).append(", ");
        }
        sql.append("CAST(").append(weight).append(" AS INTEGER) AS ").append(WEIGHT).append("\nFROM ").append(fromClause);
        if (!filters.isEmpty()) {
            sql.append("\nWHERE ").append(filters.stream().map(f -> "(" + f + ")").collect(Collectors.joining(" AND ")));
        }
        return sql.toString();
    }
}
