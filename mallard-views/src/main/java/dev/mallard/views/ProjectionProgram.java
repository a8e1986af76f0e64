// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.sql.Connection;
import java.util.List;
import java.util.Set;

/**
 * Projection and filter over inner joins, and UNION ALL of those: linear in each input, so the view's delta is
 * the source's delta projected, with no state beyond the view table itself.
 *
 * @param branches one per SELECT of a UNION ALL; their columns are the view's columns
 */
record ProjectionProgram(List<Branch> branches) implements DeltaProgram {
    ProjectionProgram {
        branches = List.copyOf(branches);
        if (branches.isEmpty()) {
            throw new IllegalArgumentException("branches is empty");
        }
    }

    @Override
    public List<TableName> tables() {
        return Branch.tables(branches);
    }

    @Override
    public List<String> outputs() {
        return branches.get(0).columns();
    }

    @Override
    public void initialize(Connection connection) {
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + Branch.current(branches));
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + Branch.delta(branches, changed));
    }

    @Override
    public void dropState(Connection connection) {
        // No state besides the view table.
    }
}
