package dev.mallard.server.http;

import java.util.Locale;
import java.util.Optional;

/** The result encodings of {@code /v1/query}, chosen by the Accept header. */
enum ResultFormat {
    ARROW("application/vnd.apache.arrow.stream"),
    TSV("text/tab-separated-values"),
    JSONL("application/jsonl");

    private final String contentType;

    ResultFormat(String contentType) {
        this.contentType = contentType;
    }

    String contentType() {
        return contentType;
    }

    /** The first media range of the Accept header we serve; Arrow when the header is absent or accepts anything. */
    static Optional<ResultFormat> negotiate(Optional<String> accept) {
        if (accept.isEmpty() || accept.get().isBlank()) {
            return Optional.of(ARROW);
        }
        for (String range : accept.get().split(",")) {
            String type = range.split(";")[0].trim().toLowerCase(Locale.ROOT);
            switch (type) {
                case "application/vnd.apache.arrow.stream", "application/vnd.apache.arrow", "*/*", "application/*" -> {
                    return Optional.of(ARROW);
                }
                case "text/tab-separated-values", "text/tsv", "text/*" -> {
                    return Optional.of(TSV);
                }
                case "application/jsonl", "application/x-ndjson", "application/x-jsonlines" -> {
                    return Optional.of(JSONL);
                }
                default -> {
                    // not ours; try the next range
                }
            }
        }
        return Optional.empty();
    }
}
