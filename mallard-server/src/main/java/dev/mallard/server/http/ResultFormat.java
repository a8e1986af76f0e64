// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import java.util.Locale;
import java.util.Optional;

/** The result encodings of {@code /v1/query} and {@code /v1/named-query}, chosen by the Accept header. */
public enum ResultFormat {
    ARROW("application/vnd.apache.arrow.stream"),
    TSV("text/tab-separated-values; charset=utf-8"),
    JSONL("application/jsonl; charset=utf-8");

    private final String contentType;

    ResultFormat(String contentType) {
        this.contentType = contentType;
    }

    public String contentType() {
        return contentType;
    }

    /**
     * The first media range of the Accept header that names TSV or JSON lines; Arrow for anything else (no header,
     * {@code *}{@code /*}, {@code application/json}, {@code text/csv}...), as DazzleDuck answers.
     */
    public static ResultFormat negotiate(Optional<String> accept) {
        if (accept.isEmpty() || accept.get().isBlank()) {
            return ARROW;
        }
        for (String range : accept.get().split(",")) {
            String type = range.split(";")[0].trim().toLowerCase(Locale.ROOT);
            switch (type) {
                case "application/vnd.apache.arrow.stream", "application/vnd.apache.arrow" -> {
                    return ARROW;
                }
                case "text/tab-separated-values", "text/tsv" -> {
                    return TSV;
                }
                case "application/jsonl", "application/x-ndjson", "application/x-jsonlines" -> {
                    return JSONL;
                }
                default -> {
                    // not ours; try the next range
                }
            }
        }
        return ARROW;
    }
}
