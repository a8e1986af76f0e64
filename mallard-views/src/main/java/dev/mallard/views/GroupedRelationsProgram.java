// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.sql.Connection;
import java.util.List;
import java.util.Set;

/**
 * A view's program with the aggregating CTEs and subqueries it reads: each {@link GroupedRelation} recomputes its
 * touched groups before the program runs and keeps them after, so the program sees the relations' current rows
 * and deltas as it sees a table's. The relations are in creation order, so one that reads another comes after it.
 */
record GroupedRelationsProgram(DeltaProgram program, List<GroupedRelation> relations) implements DeltaProgram {
    GroupedRelationsProgram {
        requireNonNull(program, "program is null");
        relations = List.copyOf(relations);
    }

    @Override
    public List<TableName> tables() {
        return program.tables();
    }

    @Override
    public List<String> outputs() {
        return program.outputs();
    }

    @Override
    public void initialize(Connection connection) {
        relations.forEach(r -> r.create(connection));
        program.initialize(connection);
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        relations.forEach(r -> r.prepare(connection, changed));
        program.maintain(connection, changed);
        relations.forEach(r -> r.commit(connection));
    }

    @Override
    public void dropState(Connection connection) {
        program.dropState(connection);
        relations.forEach(r -> r.drop(connection));
    }
}
