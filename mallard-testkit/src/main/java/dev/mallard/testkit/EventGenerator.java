// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * SQLFlow-shaped test events, the {@value #USER_ACTION} fixture, one JSON object per call:
 *
 * <pre>{@code {"ip":"203.0.113.7","event":"search","properties":{"city":"New York","country":"US"},
 *  "timestamp":"2025-01-01T00:00:00.417Z","type":"track","userId":"6f1c...-..."}}</pre>
 *
 * <p>The distribution, so that tests and demos can predict their results:
 * <ul>
 *   <li>{@code properties.city} (and its {@code country}) cycles through the cities in order: event {@code i}
 *       (from 0) has city {@code i % cities.size()}. Of N events each city gets N / size, and the first
 *       N % size cities one more. The default is {@link #DEFAULT_CITIES}: New York and Baltimore, half each.</li>
 *   <li>{@code timestamp} starts at the start instant (default {@link #DEFAULT_START}) and grows by 0 to 999 ms per
 *       event, so it never decreases; RFC 3339 in UTC with milliseconds.</li>
 *   <li>{@code event} is uniform over {@link #EVENTS}, {@code type} uniform over {@link #TYPES}; {@code ip} is a
 *       random IPv4 address and {@code userId} a random UUID.</li>
 * </ul>
 * Everything but the cycling cities comes from a {@link SplittableRandom} with the given seed: the same seed, cities
 * and start give the same bytes. Not thread-safe; one generator per thread.
 */
public final class EventGenerator {
    /** The fixture name, as SQLFlow's publisher calls it. */
    public static final String USER_ACTION = "user_action";
    public static final List<City> DEFAULT_CITIES = List.of(new City("New York", "US"), new City("Baltimore", "US"));
    public static final Instant DEFAULT_START = Instant.parse("2025-01-01T00:00:00Z");
    public static final List<String> EVENTS = List.of("search", "click", "view", "purchase");
    public static final List<String> TYPES = List.of("track", "page", "identify");

    private static final DateTimeFormatter RFC_3339_MILLIS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final JsonFactory JSON = new JsonFactory();

    private final SplittableRandom random;
    private final List<City> cities;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private long index;
    private long epochMillis;

    /** A city and the country written beside it. */
    public record City(String name, String country) {
        public City {
            requireNonNull(name, "name is null");
            requireNonNull(country, "country is null");
        }
    }

    private EventGenerator(long seed, List<City> cities, Instant start) {
        this.random = new SplittableRandom(seed);
        this.cities = List.copyOf(requireNonNull(cities, "cities is null"));
        if (this.cities.isEmpty()) {
            throw new IllegalArgumentException("cities is empty");
        }
        this.epochMillis = requireNonNull(start, "start is null").toEpochMilli();
    }

    /** User actions over {@link #DEFAULT_CITIES}, starting at {@link #DEFAULT_START}. */
    public static EventGenerator userActions(long seed) {
        return new EventGenerator(seed, DEFAULT_CITIES, DEFAULT_START);
    }

    /** User actions cycling through these cities, starting at {@link #DEFAULT_START}. */
    public static EventGenerator userActions(long seed, List<City> cities) {
        return new EventGenerator(seed, cities, DEFAULT_START);
    }

    public static EventGenerator userActions(long seed, List<City> cities, Instant start) {
        return new EventGenerator(seed, cities, start);
    }

    /**
     * The generator for a fixture name, as {@code mallard dev publish --fixture} takes it.
     *
     * @throws MallardException {@code user.cli.argument_invalid} for a name it does not know
     */
    public static EventGenerator fixture(String name, long seed) {
        if (!USER_ACTION.equals(requireNonNull(name, "name is null"))) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "unknown fixture '" + name + "'; known: " + USER_ACTION);
        }
        return userActions(seed);
    }

    /** The next event as UTF-8 JSON, without a line break. */
    public byte[] next() {
        City city = cities.get((int) (index++ % cities.size()));
        epochMillis += random.nextInt(1000);
        buffer.reset();
        try (JsonGenerator json = JSON.createGenerator(buffer)) {
            json.writeStartObject();
            json.writeStringField("ip", ip());
            json.writeStringField("event", EVENTS.get(random.nextInt(EVENTS.size())));
            json.writeObjectFieldStart("properties");
            json.writeStringField("city", city.name());
            json.writeStringField("country", city.country());
            json.writeEndObject();
            json.writeStringField("timestamp", RFC_3339_MILLIS.format(Instant.ofEpochMilli(epochMillis)));
            json.writeStringField("type", TYPES.get(random.nextInt(TYPES.size())));
            json.writeStringField("userId", userId());
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory failed", e);
        }
        return buffer.toByteArray();
    }

    /** A version 4 UUID, as a real event's would be, but drawn from the seeded generator. */
    private String userId() {
        long high = (random.nextLong() & ~0xF000L) | 0x4000L;
        long low = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(high, low).toString();
    }

    private String ip() {
        return (1 + random.nextInt(254)) + "." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
    }
}
