// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.sql.Connection;
import java.util.List;
import java.util.Set;

/**
 * The compiled maintenance of one view. Both methods write the view's change as a Z-set (the view's columns
 * plus a signed weight) into {@link ViewTable#OUTPUT}, which {@link ViewTable} then applies to the view table.
 */
sealed interface DeltaProgram permits ProjectionProgram, AggregateProgram, RecursiveProgram, PartitionProgram,
        TopKProgram, GroupedRelationsProgram {
    List<TableName> tables();

    /** The view's columns as SQL, one per view table column. */
    List<String> outputs();

    /** Builds the program's state from the tables' current contents and writes every view row with weight +1. */
    void initialize(Connection connection);

    /** Moves the state by the deltas of the changed tables and writes the view's output delta. */
    void maintain(Connection connection, Set<TableName> changed);

    void dropState(Connection connection);
}
