// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.session.Session;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.flight.SessionOptionValue;
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SessionOptionValueVisitor;
import org.apache.arrow.flight.SetSessionOptionsResult;

/**
 * The Flight SQL session options Mallard knows: {@code catalog} and {@code schema}, which run DuckDB's {@code USE}
 * on the session's connection. The JDBC driver sets {@code catalog} when the connection names one.
 */
final class SessionOptions {
    static final String CATALOG = "catalog";
    static final String SCHEMA = "schema";

    private SessionOptions() {}

    /** Applies the options in the order catalog, schema; answers an error for each one it could not apply. */
    static Map<String, SetSessionOptionsResult.Error> set(Session session, Map<String, SessionOptionValue> options) {
        Map<String, SetSessionOptionsResult.Error> errors = new HashMap<>();
        options.keySet().stream().filter(name -> !name.equals(CATALOG) && !name.equals(SCHEMA))
                .forEach(name -> errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_NAME)));
        for (String name : new String[] {CATALOG, SCHEMA}) {
            SessionOptionValue value = options.get(name);
            if (value == null) {
                continue;
            }
            String text = value.acceptVisitor(new TextValue());
            if (text == null || text.isBlank()) {
                errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_VALUE));
                continue;
            }
            String target = name.equals(CATALOG) ? SqlText.identifier(text) : SqlText.identifier(current(session, "current_database()")) + "." + SqlText.identifier(text);
            try {
                session.sql(connection -> {
                    try (Statement statement = connection.createStatement()) {
                        return statement.execute("USE " + target);
                    }
                });
            } catch (MallardException e) {
                errors.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.INVALID_VALUE));
            }
        }
        return errors;
    }

    static Map<String, SessionOptionValue> get(Session session) {
        return Map.of(
                CATALOG, SessionOptionValueFactory.makeSessionOptionValue(current(session, "current_database()")),
                SCHEMA, SessionOptionValueFactory.makeSessionOptionValue(current(session, "current_schema()")));
    }

    private static String current(Session session, String function) {
        return session.sql(connection -> {
            try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT " + function)) {
                rs.next();
                return rs.getString(1);
            }
        });
    }

    /** A string option's text; null for any other kind of value. */
    private static final class TextValue implements SessionOptionValueVisitor<String> {
        @Override
        public String visit(String value) {
            return value;
        }

        @Override
        public String visit(boolean value) {
            return null;
        }

        @Override
        public String visit(long value) {
            return null;
        }

        @Override
        public String visit(double value) {
            return null;
        }

        @Override
        public String visit(String[] value) {
            return null;
        }

        @Override
        public String visit(Void value) {
            return null;
        }
    }
}
