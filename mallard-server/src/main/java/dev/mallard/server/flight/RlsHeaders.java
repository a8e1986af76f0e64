// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.server.rls.RlsClaims;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.arrow.flight.CallHeaders;

/** The row-level security claims a Flight client sends as call headers: the JDBC driver sends its connection properties so. */
final class RlsHeaders {
    private RlsHeaders() {}

    static Map<String, Object> claims(CallHeaders headers) {
        Map<String, Object> claims = new LinkedHashMap<>();
        for (String name : RlsClaims.NAMES) {
            String value = headers.get(name);
            if (value != null && !value.isBlank()) {
                claims.put(name, value);
            }
        }
        return claims;
    }
}
