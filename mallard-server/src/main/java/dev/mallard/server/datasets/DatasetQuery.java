// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One request for a dataset, resolved: the grain it runs, the window it covers and the value each param binds.
 * Values are typed here; none of them becomes SQL text.
 *
 * @param values every declared param's value (null where a request gave none and there is no default), in declaration order
 */
record DatasetQuery(ServeConfig.Dataset dataset, Optional<ServeConfig.Grain> grain, Optional<Window> window, Map<String, Object> values) {
    /** The request key that picks a grain. */
    static final String GRAIN = "grain";

    DatasetQuery {
        requireNonNull(dataset, "dataset is null");
        requireNonNull(grain, "grain is null");
        requireNonNull(window, "window is null");
        values = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(values, "values is null")));
    }

    /** A ranged request's window as bound: since inclusive, until exclusive. */
    record Window(Instant since, Instant until) {}

    /** The statement this request runs. */
    String sql() {
        return grain.map(ServeConfig.Grain::sql).orElseGet(() -> dataset.sql().orElseThrow());
    }

    /**
     * @param query the request's query parameters, each with every value it was given
     * @param now the instant a ranged request's until defaults to
     */
    static DatasetQuery resolve(ServeConfig.Dataset dataset, Map<String, List<String>> query, Instant now) {
        Map<String, String> given = new LinkedHashMap<>();
        Optional<String> grainName = Optional.empty();
        for (Map.Entry<String, List<String>> entry : query.entrySet()) {
            String key = entry.getKey();
            if (entry.getValue().size() != 1) {
                throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, key + " is given " + entry.getValue().size() + " times; give it once");
            }
            if (key.equals(GRAIN)) {
                grainName = Optional.of(entry.getValue().getFirst());
            } else if (dataset.param(key).isEmpty()) {
                throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, "dataset " + dataset.name() + " has no param " + key
                        + "; it takes " + (dataset.params().isEmpty() ? "none" : String.join(", ", dataset.params().stream().map(ServeConfig.Param::name).toList()))
                        + (dataset.grains().isEmpty() ? "" : " and grain"));
            } else {
                given.put(key, entry.getValue().getFirst());
            }
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (ServeConfig.Param param : dataset.params()) {
            Optional<String> text = Optional.ofNullable(given.get(param.name())).or(param::defaultValue);
            if (text.isEmpty() && param.required()) {
                throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, param.name() + " is required by dataset " + dataset.name());
            }
            values.put(param.name(), text.map(value -> parse(param, value)).orElse(null));
        }
        if (dataset.grains().isEmpty()) {
            if (grainName.isPresent()) {
                throw new MallardException(ErrorCode.USER_DATASET_UNKNOWN_GRAIN, "dataset " + dataset.name() + " has no grains; leave out grain");
            }
            return new DatasetQuery(dataset, Optional.empty(), Optional.empty(), values);
        }
        Optional<ServeConfig.Grain> named = grainName.map(name -> Optional.ofNullable(dataset.grains().get(name)).orElseThrow(
                () -> new MallardException(ErrorCode.USER_DATASET_UNKNOWN_GRAIN, "dataset " + dataset.name() + " has no grain " + name
                        + "; its grains are " + String.join(", ", dataset.grains().keySet()))));
        if (dataset.range().isEmpty()) {
            ServeConfig.Grain grain = named.orElseThrow(() -> new MallardException(ErrorCode.USER_DATASET_UNKNOWN_GRAIN, "dataset " + dataset.name()
                    + " needs a grain: one of " + String.join(", ", dataset.grains().keySet())));
            return new DatasetQuery(dataset, Optional.of(grain), Optional.empty(), values);
        }
        ServeConfig.Range range = dataset.range().get();
        Instant until = Optional.ofNullable((LocalDateTime) values.get(range.until())).map(time -> time.toInstant(ZoneOffset.UTC)).orElse(now);
        Instant since = Optional.ofNullable((LocalDateTime) values.get(range.since())).map(time -> time.toInstant(ZoneOffset.UTC))
                .orElse(until.minus(range.defaultWidth()));
        if (!since.isBefore(until)) {
            throw new MallardException(ErrorCode.USER_DATASET_INVALID_RANGE, range.since() + " " + since + " is not before " + range.until() + " " + until);
        }
        Duration width = Duration.between(since, until);
        ServeConfig.Grain grain;
        if (named.isPresent()) {
            grain = named.get();
            if (width.compareTo(grain.maxRange().orElseThrow()) > 0) {
                throw new MallardException(ErrorCode.USER_DATASET_RANGE_TOO_WIDE, "the range " + since + " to " + until + " is " + words(width)
                        + ", wider than grain " + grain.name() + "'s max_range of " + words(grain.maxRange().get()) + "; narrow it or ask a coarser grain");
            }
        } else {
            grain = dataset.grains().values().stream().filter(candidate -> width.compareTo(candidate.maxRange().orElseThrow()) <= 0).findFirst()
                    .orElseThrow(() -> {
                        ServeConfig.Grain widest = dataset.grains().values().stream().reduce((first, second) -> second).orElseThrow();
                        return new MallardException(ErrorCode.USER_DATASET_RANGE_TOO_WIDE, "the range " + since + " to " + until + " is "
                                + words(width) + ", wider than every grain serves (the widest, " + widest.name() + ", serves "
                                + words(widest.maxRange().orElseThrow()) + ")");
                    });
        }
        Instant boundSince = grain.bucket().map(bucket -> roundUp(since, bucket)).orElse(since);
        Instant boundUntil = grain.bucket().map(bucket -> roundUp(until, bucket)).orElse(until);
        values.put(range.since(), LocalDateTime.ofInstant(boundSince, ZoneOffset.UTC));
        values.put(range.until(), LocalDateTime.ofInstant(boundUntil, ZoneOffset.UTC));
        return new DatasetQuery(dataset, Optional.of(grain), Optional.of(new Window(boundSince, boundUntil)), values);
    }

    /**
     * Whether resolving {@code query} reads the clock: a ranged dataset whose until the request leaves out and no
     * default gives, so that it is now. Other requests resolve the same whenever they come.
     */
    static boolean readsClock(ServeConfig.Dataset dataset, Map<String, List<String>> query) {
        if (dataset.range().isEmpty()) {
            return false;
        }
        String until = dataset.range().get().until();
        return !query.containsKey(until) && dataset.param(until).flatMap(ServeConfig.Param::defaultValue).isEmpty();
    }

    /** The first multiple of {@code bucket} since the Unix epoch at or after {@code time}. */
    static Instant roundUp(Instant time, Duration bucket) {
        long width = bucket.toMillis();
        long millis = time.toEpochMilli();
        long floor = Math.floorDiv(millis, width) * width;
        return Instant.ofEpochMilli(floor == millis && time.getNano() % 1_000_000 == 0 ? floor : floor + width);
    }

    /** A request's text as the param's type: a Long, a String, or a UTC LocalDateTime for a timestamp. */
    static Object parse(ServeConfig.Param param, String text) {
        return switch (param.type()) {
            case STRING -> text;
            case INTEGER -> {
                long value;
                try {
                    value = Long.parseLong(text.trim());
                } catch (NumberFormatException e) {
                    throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, param.name() + " '" + text + "' is not an integer");
                }
                if (param.min().isPresent() && value < param.min().getAsLong()) {
                    throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, param.name() + " " + value + " is below its min " + param.min().getAsLong());
                }
                if (param.max().isPresent() && value > param.max().getAsLong()) {
                    throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, param.name() + " " + value + " is above its max " + param.max().getAsLong());
                }
                yield value;
            }
            case TIMESTAMP -> {
                try {
                    yield LocalDateTime.ofInstant(ServeConfigReader.timestamp(text).toInstant(), ZoneOffset.UTC);
                } catch (MallardException e) {
                    throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, param.name() + ": " + e.getMessage());
                }
            }
        };
    }

    private static String words(Duration width) {
        return width.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }
}
