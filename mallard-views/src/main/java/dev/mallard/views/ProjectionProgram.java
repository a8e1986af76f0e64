package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.sql.Connection;
import java.util.List;
import java.util.Set;

/**
 * Projection and filter over inner joins: linear in each input, so the view's delta is the source's delta
 * projected, with no state beyond the view table itself.
 */
record ProjectionProgram(Source source, List<String> outputs) implements DeltaProgram {
    ProjectionProgram {
        requireNonNull(source, "source is null");
        outputs = List.copyOf(outputs);
    }

    @Override
    public List<TableName> tables() {
        return source.tables();
    }

    @Override
    public void initialize(Connection connection) {
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + source.current(outputs));
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + source.delta(outputs, changed));
    }

    @Override
    public void dropState(Connection connection) {
        // No state besides the view table.
    }
}
