// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.session.Session;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Arrow schema DuckDB gives columns of the named types, asked of DuckDB itself (an empty result of
 * {@code CAST(NULL AS type)} columns), so a prepared statement announces exactly the schema its stream will have.
 */
final class ArrowTypes {
    private static final String FALLBACK = "VARCHAR";

    private ArrowTypes() {}

    /** @param names column names; {@code types} their DuckDB type names, as {@code ResultSetMetaData} gives them */
    static Schema schemaOf(Session session, List<String> names, List<String> types) {
        if (names.isEmpty()) {
            return new Schema(List.of());
        }
        return session.derived("arrow-schema\0" + String.join("\0", names) + "\1"
                + String.join("\0", types.stream().map(String::valueOf).toList()), Schema.class, () -> derive(session, names, types));
    }

    private static Schema derive(Session session, List<String> names, List<String> types) {
        try {
            return query(session, names, types);
        } catch (RuntimeException e) {
            // A type without a SQL spelling (a parameter DuckDB could not type, say) is sent as text, column by column.
            List<String> safe = new ArrayList<>();
            for (int i = 0; i < types.size(); i++) {
                safe.add(castable(session, types.get(i)) ? types.get(i) : FALLBACK);
            }
            return query(session, names, safe);
        }
    }

    private static boolean castable(Session session, String type) {
        try {
            query(session, List.of("x"), List.of(type));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Schema query(Session session, List<String> names, List<String> types) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int i = 0; i < names.size(); i++) {
            if (i > 0) {
                sql.append(", ");
            }
            String type = types.get(i) == null || types.get(i).isBlank() || types.get(i).equalsIgnoreCase("UNKNOWN") ? FALLBACK : types.get(i);
            sql.append("CAST(NULL AS ").append(type).append(") AS ").append(SqlText.identifier(names.get(i)));
        }
        sql.append(" LIMIT 0");
        return session.sql(connection -> {
            try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql.toString());
                    ArrowReader reader = ArrowExport.export(rs, session.allocator(), 1)) {
                Schema exported = reader.getVectorSchemaRoot().getSchema();
                // Announced as the stream sends them: ENUMs decoded to their labels (see DictionaryDecoding).
                List<Field> fields = (DictionaryDecoding.needed(exported) ? DictionaryDecoding.decoded(exported, reader) : exported).getFields();
                // DuckDB marks every result column nullable already; keep its fields as they are.
                return new Schema(fields);
            } catch (IOException e) {
                throw new java.sql.SQLException("cannot read the Arrow schema of " + types, e);
            }
        });
    }
}
