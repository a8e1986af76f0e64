// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import java.util.List;
import java.util.Locale;

/**
 * Whether an {@code Accept-Encoding} header admits a content coding (RFC 9110, 12.5.3): named with a quality above
 * zero, or not named and admitted by {@code *}. A quality that does not parse counts as 1, as a lenient reader would.
 */
final class AcceptEncoding {
    private AcceptEncoding() {}

    static boolean accepts(List<String> headerValues, String coding) {
        Double named = null;
        Double wildcard = null;
        for (String value : headerValues) {
            for (String element : value.split(",")) {
                String[] parts = element.split(";");
                String name = parts[0].trim().toLowerCase(Locale.ROOT);
                if (name.isEmpty()) {
                    continue;
                }
                double quality = quality(parts);
                if (name.equals(coding)) {
                    named = quality;
                } else if (name.equals("*")) {
                    wildcard = quality;
                }
            }
        }
        if (named != null) {
            return named > 0;
        }
        return wildcard != null && wildcard > 0;
    }

    private static double quality(String[] parts) {
        for (int i = 1; i < parts.length; i++) {
            String parameter = parts[i].trim();
            int equals = parameter.indexOf('=');
            if (equals > 0 && parameter.substring(0, equals).trim().equalsIgnoreCase("q")) {
                try {
                    return Double.parseDouble(parameter.substring(equals + 1).trim());
                } catch (NumberFormatException e) {
                    return 1;
                }
            }
        }
        return 1;
    }
}
