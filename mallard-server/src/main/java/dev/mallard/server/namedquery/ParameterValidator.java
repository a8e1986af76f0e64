// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.namedquery;

import java.util.Map;

/**
 * Checks a named query's parameters before its template renders (DazzleDuck's validators). A row of the
 * {@code named_query_table} names its validators by class in its {@code validators} column; each class implements
 * this interface and has a public no-argument constructor. A class that does not implement it is never instantiated.
 */
public interface ParameterValidator {
    /** @throws Rejected naming what is wrong with the parameters */
    void validate(Map<String, String> parameters) throws Rejected;

    /** What the validator checks, in words. */
    default String description() {
        return "";
    }

    /** The parameters are refused; the message is shown to the caller. */
    final class Rejected extends Exception {
        public Rejected(String message) {
            super(message);
        }
    }
}
