// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.util.Optional;

/**
 * How one statement runs: rows per Arrow batch, and how long it may run before DuckDB is interrupted.
 *
 * @param timeout empty for no limit
 * @param queryId the client's name for the statement, by which {@code /v1/cancel} may cancel it; empty for none
 */
public record QueryOptions(int fetchSize, Optional<Duration> timeout, Optional<String> queryId) {
    /** Header (or query parameter) that sets rows per batch. */
    public static final String FETCH_SIZE = "x-dd-fetch-size";
    /** Header (or query parameter) that sets a statement's timeout in seconds. */
    public static final String QUERY_TIMEOUT = "x-dd-query-timeout";
    /** Header (or query parameter) that names a statement, so that a cancel can say which one it means. */
    public static final String QUERY_ID = "x-dd-query-id";
    static final int MAX_FETCH_SIZE = 1_000_000;

    public QueryOptions(int fetchSize, Optional<Duration> timeout) {
        this(fetchSize, timeout, Optional.empty());
    }

    public QueryOptions {
        if (fetchSize <= 0) {
            throw new IllegalArgumentException("fetchSize must be positive");
        }
        requireNonNull(timeout, "timeout is null");
        requireNonNull(queryId, "queryId is null");
    }

    /** These options for a statement the client named {@code id} (blank means unnamed). */
    public QueryOptions withQueryId(Optional<String> id) {
        return new QueryOptions(fetchSize, timeout, id.map(String::trim).filter(value -> !value.isEmpty()));
    }

    /**
     * The options a client asks for, within the server's: a fetch size from 1 to 1,000,000 rows, and a timeout in
     * whole seconds, as DazzleDuck reads {@code x-dd-query-timeout}: absent or 0 takes the server's
     * ({@code maxTimeoutSeconds}, 0 for none); a longer one than the server's is refused rather than shortened.
     *
     * @throws MallardException {@code user.cli.argument_invalid} for a value that is not a whole number, a negative
     *     timeout, or one that exceeds the server's maximum
     */
    public static QueryOptions resolve(Optional<String> fetchSize, Optional<String> timeoutSeconds, int defaultFetchSize, int maxTimeoutSeconds) {
        int rows = fetchSize.map(value -> positive(FETCH_SIZE, value, MAX_FETCH_SIZE)).orElse(defaultFetchSize);
        int asked = timeoutSeconds.map(QueryOptions::timeoutSeconds).orElse(0);
        if (maxTimeoutSeconds > 0 && asked > maxTimeoutSeconds) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "requested " + QUERY_TIMEOUT + " of " + asked
                    + " s exceeds server maximum of " + maxTimeoutSeconds + " s (query_timeout_seconds); ask for at most that");
        }
        int seconds = asked > 0 ? asked : maxTimeoutSeconds;
        return new QueryOptions(rows, seconds > 0 ? Optional.of(Duration.ofSeconds(seconds)) : Optional.empty());
    }

    private static int timeoutSeconds(String value) {
        int parsed;
        try {
            parsed = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, QUERY_TIMEOUT + " must be a whole number of seconds, not '" + value + "'");
        }
        if (parsed < 0) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, QUERY_TIMEOUT + " must be non-negative (0 takes the server's), not " + parsed);
        }
        return parsed;
    }

    private static int positive(String name, String value, int max) {
        try {
            int parsed = Integer.parseInt(value.trim());
            if (parsed > 0 && parsed <= max) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, name + " must be a whole number from 1 to " + max + ", not '" + value + "'");
    }
}
