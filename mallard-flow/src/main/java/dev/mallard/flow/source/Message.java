package dev.mallard.flow.source;

import static java.util.Objects.requireNonNull;

/**
 * One raw message from a source with its position. For a file fixture the topic is the file name,
 * the partition 0 and the offset the zero-based line number.
 *
 * @param key the record key, or null
 * @param value the payload: one JSON document (the handler decides how to read it)
 */
public record Message(String topic, int partition, long offset, byte[] key, byte[] value) {
    public Message {
        requireNonNull(topic, "topic is null");
        requireNonNull(value, "value is null");
    }

    public static Message ofLine(String source, long lineIndex, byte[] value) {
        return new Message(source, 0, lineIndex, null, value);
    }

    /** Where the message came from, as a user reads it in an error: {@code topic[partition]@offset}. */
    public String position() {
        return topic + "[" + partition + "]@" + offset;
    }
}
