// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ops;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One audit line per statement, on the logger {@code dev.mallard.server.audit}: its id, user, listener, rows, bytes
 * out, duration, outcome and the query with secrets redacted; the same statement counted in {@link ServerMetrics}.
 */
public final class StatementAudit {
    private static final Logger AUDIT = LoggerFactory.getLogger("dev.mallard.server.audit");
    /**
     * DuckDB's secret parameters ({@code CREATE SECRET (TYPE s3, KEY_ID '..', SECRET '..')}) take a literal without
     * {@code =}, which {@link Redactor} does not see. This only hides text in a log line; nothing is decided on it.
     */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)(\\b(?:secret|key_id|password|token|session_token|account_key|client_secret|connection_string|bearer_token|refresh_token)\\s+)'(?:[^']|'')*'");
    private static final int MAX_QUERY_CHARS = 4096;

    private final ServerMetrics metrics;

    public StatementAudit(ServerMetrics metrics) {
        this.metrics = requireNonNull(metrics, "metrics is null");
    }

    /** What became of a statement, from its error (null when it succeeded). */
    public static String outcome(Throwable failure) {
        if (failure == null) {
            return "ok";
        }
        if (failure instanceof MallardException mallard) {
            ErrorCode code = mallard.errorCode();
            return switch (code) {
                case USER_SQL_TIMEOUT -> "timeout";
                case USER_SQL_CANCELLED -> "cancelled";
                case USER_ACCESS_DENIED, USER_AUTH_FAILED -> "refused";
                default -> "error";
            };
        }
        return "error";
    }

    /** A query's text as the audit line shows it: credentials and secret literals replaced by {@code ***}, on one line. */
    public static String redacted(String sql) {
        if (sql == null) {
            return "";
        }
        String out = SECRET_PARAMETER.matcher(sql).replaceAll(m -> Matcher.quoteReplacement(m.group(1)) + "'***'");
        out = Redactor.redact(out).replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
        return out.length() > MAX_QUERY_CHARS ? out.substring(0, MAX_QUERY_CHARS) + "..." : out;
    }

    /**
     * Logs the statement's line and counts it.
     *
     * @param bytesOut bytes of the result sent, -1 when not known
     */
    public void finished(String id, String user, String listener, String sql, long rows, long bytesOut, Duration took, String outcome) {
        metrics.statement(listener, outcome, took);
        AUDIT.info("statement id={} user={} mode={} outcome={} rows={} bytes_out={} duration_ms={} query=\"{}\"", id, user, listener, outcome, rows,
                bytesOut, took.toMillis(), redacted(sql).replace("\"", "\\\""));
    }
}
