// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import static java.util.Objects.requireNonNull;

/**
 * One raw message from a source with its position. For a file fixture the topic is the file name,
 * the partition {@link #FILE_PARTITION} and the offset the zero-based line number.
 *
 * @param key the record key, or null
 * @param value the payload: one JSON document (the handler decides how to read it)
 * @param eventTime the record's own time in microseconds since the epoch, once read from the payload by
 *     {@code EventTimeReader}; {@link #NO_EVENT_TIME} until then
 */
public record Message(String topic, int partition, long offset, byte[] key, byte[] value, long eventTime) {
    /** The event time of a message whose time has not been read. */
    public static final long NO_EVENT_TIME = Long.MIN_VALUE;

    public Message {
        requireNonNull(topic, "topic is null");
        requireNonNull(value, "value is null");
    }

    public Message(String topic, int partition, long offset, byte[] key, byte[] value) {
        this(topic, partition, offset, key, value, NO_EVENT_TIME);
    }

    /** This message with its event time read. */
    public Message withEventTime(long micros) {
        return new Message(topic, partition, offset, key, value, micros);
    }

    public boolean hasEventTime() {
        return eventTime != NO_EVENT_TIME;
    }

    /** Partition of messages read from a file, whose offset is the zero-based line index. */
    public static final int FILE_PARTITION = -1;

    public static Message ofLine(String file, long lineIndex, byte[] value) {
        return new Message(file, FILE_PARTITION, lineIndex, null, value);
    }

    /**
     * Where the message came from, as a user reads it in an error: {@code topic[partition]@offset}, or
     * {@code file line N} for a fixture line.
     */
    public String position() {
        return partition == FILE_PARTITION ? topic + " line " + (offset + 1) : topic + "[" + partition + "]@" + offset;
    }

    /** True for a message with nothing but white space, which handlers skip. */
    public boolean isBlank() {
        for (byte b : value) {
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return false;
            }
        }
        return true;
    }
}
