// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Removes credentials from text bound for a log line or an error message. */
public final class Redactor {
    // scheme://user:password@host -> scheme://user:***@host
    private static final Pattern URL_PASSWORD = Pattern.compile("(?i)([a-z][a-z0-9+.-]*://[^:/@\\s]+:)([^@\\s]+)(@)");
    // password=..., sasl.password: ..., "secret": "..."
    private static final Pattern KEY_VALUE = Pattern.compile(
            "(?i)(\"?\\b(?:password|passwd|pwd|secret|secret_key|token|api_key|apikey|key_password|sasl\\.password|sasl_password|access_token)\\b\"?\\s*[=:]\\s*\"?)([^\"\\s,;&}]+)");
    private static final Pattern BEARER = Pattern.compile("(?i)(bearer\\s+)([A-Za-z0-9._~+/=-]+)");

    private Redactor() {}

    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = URL_PASSWORD.matcher(text).replaceAll("$1***$3");
        out = KEY_VALUE.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1)) + "***");
        return BEARER.matcher(out).replaceAll("$1***");
    }
}
