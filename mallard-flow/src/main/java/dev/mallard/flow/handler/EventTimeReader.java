// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.mallard.flow.handler.RecordColumns.EventTime;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Optional;

/**
 * Reads a record's event time from its JSON in Java, once per message, so that a window can decide whether a
 * record is late before anything is written, and the loader fills {@code event_time} with the same value.
 *
 * <p>Streams the message with Jackson down the dotted path only, skipping every other value unread.
 * {@code rfc3339} takes {@code 2015-12-12T19:11:01Z}, a fraction up to nanoseconds (kept to the microsecond,
 * truncated), {@code +02:00} or {@code Z}, and a space or lower-case {@code t} as separator; the unix formats take
 * a JSON number or a numeric string, fractions kept to the microsecond. Not thread-safe: one per pipeline thread.
 */
public final class EventTimeReader {
    private static final JsonFactory JSON = new JsonFactory();
    private static final DateTimeFormatter RFC3339 = new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .append(DateTimeFormatter.ISO_LOCAL_DATE)
            .optionalStart().appendLiteral('T').optionalEnd()
            .optionalStart().appendLiteral(' ').optionalEnd()
            .appendValue(ChronoField.HOUR_OF_DAY, 2).appendLiteral(':')
            .appendValue(ChronoField.MINUTE_OF_HOUR, 2).appendLiteral(':')
            .appendValue(ChronoField.SECOND_OF_MINUTE, 2)
            .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
            .appendOffset("+HH:MM", "Z")
            .toFormatter();
    private static final BigDecimal MICROS_PER_SECOND = BigDecimal.valueOf(1_000_000);
    private static final BigDecimal MICROS_PER_MILLI = BigDecimal.valueOf(1_000);

    private final EventTime config;
    private final String[] path;

    public EventTimeReader(EventTime config) {
        this.config = requireNonNull(config, "config is null");
        this.path = config.path().split("\\.", -1);
    }

    /** The reader of a pipeline's records, when its source configures {@code event_time}. */
    public static Optional<EventTimeReader> of(RecordColumns records) {
        return records.eventTime().map(EventTimeReader::new);
    }

    /**
     * The event time of one message, in microseconds since the epoch.
     *
     * @throws IllegalArgumentException naming the path and what is wrong, when the field is missing, null or
     *     not in the format (or the message is not a JSON object)
     */
    public long read(byte[] json) {
        String text;
        try (JsonParser parser = JSON.createParser(json)) {
            text = find(parser);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("event_time: the message is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new IllegalArgumentException("event_time: the message cannot be read: " + e.getMessage());
        }
        if (text == null) {
            throw new IllegalArgumentException("event_time: the field " + config.path()
                    + " is missing or null; every record needs its time there (pipeline.source.*.event_time.path)");
        }
        try {
            return switch (config.format()) {
                case RFC3339 -> {
                    OffsetDateTime time = OffsetDateTime.parse(text.strip(), RFC3339);
                    yield Math.addExact(Math.multiplyExact(time.toEpochSecond(), 1_000_000L), time.getNano() / 1_000);
                }
                case UNIX_SECONDS -> new BigDecimal(text.strip()).multiply(MICROS_PER_SECOND).longValue();
                case UNIX_MILLIS -> new BigDecimal(text.strip()).multiply(MICROS_PER_MILLI).longValue();
                case UNIX_MICROS -> new BigDecimal(text.strip()).longValueExact();
            };
        } catch (DateTimeException | NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("event_time: the field " + config.path() + " holds " + quote(text)
                    + ", which is not " + describe(config.format()));
        }
    }

    /** The text of the value at the path (a string's content, a number's digits), or null when absent or null. */
    private String find(JsonParser parser) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            throw new IllegalArgumentException("event_time: the message is not a JSON object");
        }
        int depth = 0;
        while (true) {
            JsonToken token = parser.nextToken();
            if (token == null || token == JsonToken.END_OBJECT) {
                return null;
            }
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (!path[depth].equals(name)) {
                parser.skipChildren();
                continue;
            }
            if (depth == path.length - 1) {
                return switch (value) {
                    case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> parser.getText();
                    case VALUE_NULL -> null;
                    case START_OBJECT -> "an object";
                    case START_ARRAY -> "a list";
                    default -> value.asString();
                };
            }
            if (value != JsonToken.START_OBJECT) {
                return null;
            }
            depth++;
        }
    }

    private static String describe(RecordColumns.EventTimeFormat format) {
        return switch (format) {
            case RFC3339 -> "an RFC 3339 time such as 2015-12-12T19:11:01Z (event_time.format: rfc3339)";
            case UNIX_SECONDS -> "a number of seconds since 1970 (event_time.format: unix_seconds)";
            case UNIX_MILLIS -> "a number of milliseconds since 1970 (event_time.format: unix_millis)";
            case UNIX_MICROS -> "a whole number of microseconds since 1970 (event_time.format: unix_micros)";
        };
    }

    private static String quote(String text) {
        String shown = text.length() > 60 ? text.substring(0, 60) + "..." : text;
        return "\"" + shown + "\"";
    }
}
