// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.flow.config.PipelineConfig.SourceConfig;
import dev.mallard.flow.source.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The columns a handler's table takes from each record rather than from its JSON keys: where the record came
 * from ({@code kafka_topic}, {@code kafka_partition}, {@code kafka_offset}) and, when the source configures
 * {@code event_time: {path, format}}, the record's own time ({@code event_time}, TIMESTAMPTZ).
 *
 * <p>A StructuredBatch table gets them by declaring columns of those names; the inferred {@code batch} table
 * gets the kafka columns when the handler's SQL names them (so {@code SELECT *} stays as SQLFlow had it
 * otherwise) and {@code event_time} whenever it is configured. Either way a record column replaces a JSON key
 * of the same name. A fixture line in {@code dev invoke} reads as partition 0 of a topic named after the file,
 * its offset the zero-based line number.
 */
public record RecordColumns(Optional<EventTime> eventTime) {
    public static final String TOPIC = "kafka_topic";
    public static final String PARTITION = "kafka_partition";
    public static final String OFFSET = "kafka_offset";
    public static final String EVENT_TIME = "event_time";
    public static final RecordColumns NONE = new RecordColumns(Optional.empty());

    private static final Pattern KAFKA_NAME = Pattern.compile("(?i)(?<![A-Za-z0-9_$])kafka_(topic|partition|offset)(?![A-Za-z0-9_$])");

    public RecordColumns {
        requireNonNull(eventTime, "eventTime is null");
    }

    /** The record columns a source block configures ({@code <type>.event_time}). */
    public static RecordColumns of(SourceConfig source) {
        requireNonNull(source, "source is null");
        JsonNode block = source.settings().path("event_time");
        if (block.isMissingNode() || block.isNull()) {
            return NONE;
        }
        return new RecordColumns(Optional.of(new EventTime(block.path("path").asText(),
                EventTimeFormat.parse(block.path("format").asText("rfc3339")))));
    }

    /** Where a column of this name comes from. */
    Origin originOf(String column) {
        return switch (column) {
            case TOPIC -> Origin.TOPIC;
            case PARTITION -> Origin.PARTITION;
            case OFFSET -> Origin.OFFSET;
            case EVENT_TIME -> eventTime.isPresent() ? Origin.EVENT_TIME : Origin.JSON;
            default -> Origin.JSON;
        };
    }

    /**
     * The record columns the inferred {@code batch} table carries for this handler SQL, with their types: the
     * kafka columns the SQL names, then {@code event_time} when configured.
     */
    List<Column> forInferred(String handlerSql) {
        List<Column> columns = new ArrayList<>();
        boolean topic = false;
        boolean partition = false;
        boolean offset = false;
        Matcher matcher = KAFKA_NAME.matcher(handlerSql);
        while (matcher.find()) {
            switch (matcher.group(1).toLowerCase(Locale.ROOT)) {
                case "topic" -> topic = true;
                case "partition" -> partition = true;
                default -> offset = true;
            }
        }
        if (topic) {
            columns.add(new Column(TOPIC, "VARCHAR"));
        }
        if (partition) {
            columns.add(new Column(PARTITION, "INTEGER"));
        }
        if (offset) {
            columns.add(new Column(OFFSET, "BIGINT"));
        }
        if (eventTime.isPresent()) {
            columns.add(new Column(EVENT_TIME, "TIMESTAMP WITH TIME ZONE"));
        }
        return columns;
    }

    /** The partition a record column shows: a fixture line reads as partition 0. */
    static int partitionOf(Message message) {
        return message.partition() == Message.FILE_PARTITION ? 0 : message.partition();
    }

    enum Origin { JSON, TOPIC, PARTITION, OFFSET, EVENT_TIME }

    /**
     * @param path the JSON field holding the time, dotted for nested fields ({@code meta.ts})
     */
    public record EventTime(String path, EventTimeFormat format) {
        public EventTime {
            requireNonNull(path, "path is null");
            requireNonNull(format, "format is null");
            if (path.isBlank()) {
                throw new IllegalArgumentException("event_time.path is blank");
            }
        }
    }

    /** How the event-time field is written. */
    public enum EventTimeFormat {
        RFC3339, UNIX_SECONDS, UNIX_MILLIS, UNIX_MICROS;

        static EventTimeFormat parse(String name) {
            return switch (name) {
                case "rfc3339" -> RFC3339;
                case "unix_seconds", "unix_s" -> UNIX_SECONDS;
                case "unix_millis", "unix_ms" -> UNIX_MILLIS;
                case "unix_micros", "unix_us" -> UNIX_MICROS;
                default -> throw new IllegalArgumentException("unknown event_time.format " + name);
            };
        }
    }
}
