// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

/** What {@code bench pipeline} measures, in the order it runs them, each under its key in the JSON report. */
enum Contender {
    BARE_CONSUMER("bare_consumer", "bare kafka-clients consumer (the limit)"),
    STRUCTURED("structured", "Mallard StructuredBatch, noop sink"),
    INFERRED("inferred", "Mallard InferredMemBatch, noop sink"),
    STATEFUL("stateful", "Mallard StructuredBatch + state, MERGE"),
    KAFKA_STREAMS("kafka_streams", "Kafka Streams");

    private final String key;
    private final String title;

    Contender(String key, String title) {
        this.key = key;
        this.title = title;
    }

    String key() {
        return key;
    }

    String title() {
        return title;
    }

    boolean isMallard() {
        return this == STRUCTURED || this == INFERRED || this == STATEFUL;
    }
}
