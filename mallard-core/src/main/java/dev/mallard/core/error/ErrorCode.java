// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The one registry of user-visible failures. Every {@link MallardException} carries one of these;
 * {@code docs/errors.md} lists them and a test keeps the two in step.
 *
 * <p>A code is {@code <class>.<domain>.<what>}: class {@code user} is a fault the user must fix,
 * {@code system} one in the environment (a service, the disk). The exit code is what the CLI returns.
 */
public enum ErrorCode {
    USER_CONFIG_INVALID("user.config.invalid", ExitCode.USER_FAULT,
            "The configuration does not match its schema: a missing, misspelt or mistyped key."),
    USER_CONFIG_UNKNOWN_KEY("user.config.unknown_key", ExitCode.USER_FAULT,
            "The configuration has a key the schema does not know."),
    USER_CONFIG_TEMPLATE_UNDEFINED("user.config.template_undefined", ExitCode.USER_FAULT,
            "The template reads a variable that is not set while a similar name is set and never read."),
    USER_CONFIG_TEMPLATE_INVALID("user.config.template_invalid", ExitCode.USER_FAULT,
            "The configuration is not a valid Jinja template or the YAML it renders to does not parse."),
    USER_CONFIG_NOT_FOUND("user.config.not_found", ExitCode.USER_FAULT,
            "A file named on the command line or in the configuration does not exist or cannot be read."),
    USER_CONFIG_UNSUPPORTED("user.config.unsupported", ExitCode.USER_FAULT,
            "The configuration asks for something Mallard does not do, such as Python `udfs`."),
    USER_SQL_INVALID("user.sql.invalid", ExitCode.USER_FAULT,
            "A SQL statement in the configuration or a query does not parse or bind."),
    USER_SQL_TOO_DEEP("user.sql.too_deep", ExitCode.USER_FAULT,
            "A statement nests subqueries, brackets or expressions deeper than the server checks (100 by default)."),
    USER_SQL_UNSUPPORTED("user.sql.unsupported", ExitCode.USER_FAULT,
            "The server's SQL gate cannot tell what a statement reaches: a node it does not know, or query() given anything but a string literal."),
    USER_SQL_TIMEOUT("user.sql.timeout", ExitCode.USER_FAULT,
            "A query ran longer than its timeout (x-dd-query-timeout, capped by the server's query_timeout_seconds) and was interrupted."),
    USER_SQL_CANCELLED("user.sql.cancelled", ExitCode.USER_FAULT,
            "A statement was cancelled on the client's request (/v1/cancel) while it ran."),
    USER_HANDLER_PARSE_FAILED("user.handler.parse_failed", ExitCode.USER_FAULT,
            "A message is not JSON, or a value does not fit the handler's table or inferred schema."),
    USER_HANDLER_SQL_FAILED("user.handler.sql_failed", ExitCode.USER_FAULT,
            "The handler's SQL failed while running over a batch."),
    USER_ICEBERG_CATALOG_INVALID("user.iceberg.catalog_invalid", ExitCode.USER_FAULT,
            "The Iceberg sink's catalog cannot be used: it is not defined, or its uri or warehouse is missing or of a kind Mallard does not open."),
    USER_ICEBERG_SCHEMA_MISMATCH("user.iceberg.schema_mismatch", ExitCode.USER_FAULT,
            "A result column does not fit the Iceberg table: the table has no such column, or the column's type cannot be written to it."),
    USER_PIPELINE_NOT_FOUND("user.pipeline.not_found", ExitCode.USER_FAULT,
            "No pipeline of that name runs in this server (GET /v1/pipelines lists them)."),
    USER_SINK_KEY_NULL("user.sink.key_null", ExitCode.USER_FAULT,
            "The Kafka sink's key column is null in a result row."),
    USER_STATE_LOCKED("user.state.locked", ExitCode.USER_FAULT,
            "The state database file is held by another process."),
    USER_STATE_MISMATCH("user.state.mismatch", ExitCode.USER_FAULT,
            "The state file belongs to another pipeline (its name, source topics or consumer group differ); the message names both."),
    USER_STATE_STORAGE_VERSION("user.state.storage_version", ExitCode.USER_FAULT,
            "storage_compatibility asks for an older DuckDB format than the existing database file has; DuckDB keeps a file's format, so copy it into a new file or set latest."),
    USER_VIEW_UNSUPPORTED("user.view.unsupported", ExitCode.USER_FAULT,
            "A materialized view's query uses an operator Mallard does not maintain incrementally yet; the message names it and the alternative."),
    USER_VIEW_STORAGE_VERSION("user.view.storage_version", ExitCode.USER_FAULT,
            "A materialized view (or dbsp_track) reads a table whose database file is in a DuckDB 1.x format (storage_compatibility v1.x): its changes are captured by triggers, which DuckDB allows only in the 2.0 format; use a file created with latest, or a plain DuckDB view."),
    USER_VIEW_FILE_INVALID("user.view.file_invalid", ExitCode.USER_FAULT,
            "A view set file for dbsp_save/dbsp_load cannot be written or read, or is not one dbsp_save writes; the message names the file and why."),
    USER_VIEW_NOT_FOUND("user.view.not_found", ExitCode.USER_FAULT,
            "No materialized view has the given name."),
    USER_VIEW_RECURSION_UNBOUNDED("user.view.recursion_unbounded", ExitCode.USER_FAULT,
            "A recursive materialized view's recursion did not reach a fixpoint within the recursion limit (rounds or time); bound it with UNION or a depth column, or raise dbsp_recursion_limit."),
    USER_VIEW_EXISTS("user.view.exists", ExitCode.USER_FAULT,
            "A table, view or materialized view already has the name a new materialized view asks for."),
    USER_VIEW_DEPENDED_ON("user.view.depended_on", ExitCode.USER_FAULT,
            "A materialized view that other materialized views read cannot be dropped without CASCADE, nor replaced by a query one of them cannot read; the message names them."),
    USER_VIEW_BROKEN("user.view.broken", ExitCode.USER_FAULT,
            "A materialized view can no longer be maintained: a table it reads was dropped or changed shape, or its ATTACHed database is missing; attach the database again, or drop the view and create it again."),
    USER_VIEW_DIVERGED("user.view.diverged", ExitCode.USER_FAULT,
            "A materialized view's table no longer holds the rows its maintained state says (it was written directly); REFRESH MATERIALIZED VIEW rebuilds it."),
    USER_VIEW_CALL_PLACEMENT("user.view.call_placement", ExitCode.USER_FAULT,
            "A dbsp_* view function was called where it cannot run: with arguments that are not constants, inside query('...'), dbsp_changes inside a larger query, or outside a single SELECT (an EXPLAIN, a write, a text of several statements); call it in a SELECT with constant arguments."),
    USER_AUTH_FAILED("user.auth.failed", ExitCode.USER_FAULT,
            "The server refused a login or a call: unknown user or wrong password, or a missing, tampered or expired token."),
    USER_AUTH_THROTTLED("user.auth.throttled", ExitCode.USER_FAULT,
            "Too many failed logins for this user from this address within the window; wait for Retry-After seconds."),
    USER_ACCESS_DENIED("user.access.denied", ExitCode.USER_FAULT,
            "The server's access mode refuses the statement, such as anything but a query on a READ_ONLY server."),
    USER_ACCESS_CLAIMS_INVALID("user.access.claims_invalid", ExitCode.USER_FAULT,
            "A token's row-level security claims (x-dd-access, x-dd-table, x-dd-filter, x-dd-variables, ...) are malformed, missing where the access mode needs them, or wider than the user's configuration allows."),
    USER_ACCESS_STATEMENT_UNSUPPORTED("user.access.statement_unsupported", ExitCode.USER_FAULT,
            "Under RESTRICTED or RESTRICT_READ_ONLY the statement holds a kind of statement, clause or node the row filter rewriter does not know, so it is refused rather than run unfiltered."),
    USER_SESSIONS_EXHAUSTED("user.server.too_many_sessions", ExitCode.USER_FAULT,
            "The server holds as many sessions as max_sessions (or max_sessions_per_user for this user) allows; close some or wait for idle ones to close."),
    USER_PREPARED_STATEMENT_CLOSED("user.server.prepared_statement_closed", ExitCode.USER_FAULT,
            "A prepared statement handle names a statement its session no longer holds: the client closed it, or the session held more than max_prepared_statements_per_session and closed the least recently used; prepare it again."),
    USER_SESSION_BUSY("user.server.session_busy", ExitCode.USER_FAULT,
            "A statement came while its session was still sending an earlier streaming result its client had not read to the end; read or close that result first, or use another connection."),
    USER_QUERY_NOT_FOUND("user.server.query_not_found", ExitCode.USER_FAULT,
            "No running statement has the id a cancel named: it finished, never ran, or runs for another user."),
    USER_REQUEST_TOO_LARGE("user.http.body_too_large", ExitCode.USER_FAULT,
            "An HTTP request body is larger than the server's http.max_body_bytes."),
    USER_DATASET_INVALID_PARAM("user.dataset.invalid_param", ExitCode.USER_FAULT,
            "A dataset request gives a parameter the dataset does not declare, leaves out a required one, or gives a value of the wrong type or outside its min/max."),
    USER_DATASET_INVALID_RANGE("user.dataset.invalid_range", ExitCode.USER_FAULT,
            "A ranged dataset request's since is not before its until."),
    USER_DATASET_NOT_FOUND("user.dataset.not_found", ExitCode.USER_FAULT,
            "No dataset of the serve configuration has the name a request asks for."),
    USER_DATASET_RANGE_TOO_WIDE("user.dataset.range_too_wide", ExitCode.USER_FAULT,
            "A dataset request's range is wider than the chosen grain's max_range, or than every grain's."),
    USER_DATASET_TIMEOUT("user.dataset.timeout", ExitCode.USER_FAULT,
            "A dataset's statement ran longer than serve.query_timeout_seconds and was interrupted."),
    USER_DATASET_TOO_MANY_ROWS("user.dataset.too_many_rows", ExitCode.USER_FAULT,
            "A dataset's answer has more rows than serve.max_rows; narrow the request or raise the cap."),
    USER_DATASET_UNKNOWN_GRAIN("user.dataset.unknown_grain", ExitCode.USER_FAULT,
            "A dataset request names a grain the dataset does not declare, or none where the dataset has grains and no range to choose one by."),
    USER_DELTA_LOG_INVALID("user.delta.log_invalid", ExitCode.USER_FAULT,
            "A read_delta table's _delta_log cannot be replayed: no commits, a missing commit, a line that is not JSON, no protocol or metaData action, or a _last_checkpoint naming missing files."),
    USER_DELTA_UNSUPPORTED("user.delta.unsupported", ExitCode.USER_FAULT,
            "A read_delta table needs what Mallard's Delta reader does not implement (a reader version above 3, column mapping, deletion vectors, another reader feature, a non-Parquet or non-local file, a partition type it does not map, files not under key=value directories of their partition values), or read_delta is called other than with one path."),
    USER_INGEST_BATCH_INVALID("user.ingest.batch_invalid", ExitCode.USER_FAULT,
            "An ingested body is not an Arrow IPC stream DuckDB can write to the queue (malformed, or columns the queue's transformation, partition or sort order do not find)."),
    USER_INGEST_BATCH_TOO_LARGE("user.ingest.batch_too_large", ExitCode.USER_FAULT,
            "An ingested batch is larger than ingestion.max_pending_write, so it can never be taken; send it in smaller batches or raise the bound (HTTP 413, Flight INVALID_ARGUMENT; not worth retrying)."),
    USER_INGEST_CONTENT_TYPE("user.ingest.content_type", ExitCode.USER_FAULT,
            "A POST /v1/ingest body is not Content-Type application/vnd.apache.arrow.stream; the server answers 415."),
    USER_INGEST_PATH_INVALID("user.ingest.path_invalid", ExitCode.USER_FAULT,
            "An ingestion queue name or path would leave the warehouse (.., an absolute path, a symlink out) or holds characters a queue name may not."),
    USER_INGEST_PENDING_WRITE_EXCEEDED("user.ingest.pending_write_exceeded", ExitCode.USER_FAULT,
            "The server holds more received-but-unwritten bytes than ingestion.max_pending_write; retry after Retry-After seconds (HTTP 429, Flight RESOURCE_EXHAUSTED)."),
    USER_INGEST_QUEUE_NOT_FOUND("user.ingest.queue_not_found", ExitCode.USER_FAULT,
            "The ingestion_queue names no queue of the server's ingestion.queues; declare it there (HTTP 404, Flight NOT_FOUND)."),
    USER_NAMED_QUERY_NOT_FOUND("user.named_query.not_found", ExitCode.USER_FAULT,
            "No row of the named_query_table has the name a request asks for."),
    USER_NAMED_QUERY_PARAMETER_INVALID("user.named_query.parameter_invalid", ExitCode.USER_FAULT,
            "A named query's validators refused the request's parameters, or its template does not render with them."),
    USER_ARGUMENT_INVALID("user.cli.argument_invalid", ExitCode.USAGE,
            "A command-line argument is missing or malformed."),
    SYSTEM_SOURCE_FAILED("system.source.failed", ExitCode.SYSTEM_FAULT,
            "The source failed: the broker refused the consumer or the connection broke beyond its retries."),
    SYSTEM_SOURCE_UNREACHABLE("system.source.unreachable", ExitCode.SINK_UNREACHABLE,
            "No Kafka broker of the source answered for pipeline.source.kafka.unreachable_deadline_seconds."),
    SYSTEM_SINK_UNREACHABLE("system.sink.unreachable", ExitCode.SINK_UNREACHABLE,
            "The sink's service could not be reached within the retry ladder."),
    SYSTEM_SINK_WRITE_FAILED("system.sink.write_failed", ExitCode.SYSTEM_FAULT,
            "The sink refused or failed to write a batch."),
    SYSTEM_KAFKA_UNREACHABLE("system.kafka.unreachable", ExitCode.SYSTEM_FAULT,
            "No Kafka broker answered at the bootstrap servers within the timeout."),
    SYSTEM_KAFKA_FAILED("system.kafka.failed", ExitCode.SYSTEM_FAULT,
            "A Kafka broker refused or failed a request (a topic creation, a produce), or the embedded broker did not start or stop."),
    SYSTEM_IO_FAILED("system.io.failed", ExitCode.SYSTEM_FAULT,
            "A file or directory Mallard needs could not be read or written."),
    SYSTEM_HTTP_BIND_FAILED("system.http.bind_failed", ExitCode.SYSTEM_FAULT,
            "The HTTP port (metrics, health) could not be bound: another process holds it or it is not permitted."),
    SYSTEM_HTTP_TOO_MANY_CONNECTIONS("system.http.too_many_connections", ExitCode.SYSTEM_FAULT,
            "The HTTP listener holds http.max_connections connections; one more is answered 503 with Retry-After and closed."),
    SYSTEM_LOGIN_SERVICE_FAILED("system.auth.login_service_failed", ExitCode.SYSTEM_FAULT,
            "The login service (login_url) could not be reached in time, or answered an error or a body that is not a login answer."),
    SYSTEM_FLIGHT_BIND_FAILED("system.flight.bind_failed", ExitCode.SYSTEM_FAULT,
            "The Flight SQL port could not be bound: another process holds it or it is not permitted."),
    SYSTEM_VIEW_BUSY("system.view.busy", ExitCode.SYSTEM_FAULT,
            "View maintenance could not start: another connection's maintenance held the database's views past the bound, or a dbsp_* function called inside a query found them busy (it never waits there); try again."),
    SYSTEM_ENGINE_FAILED("system.engine.failed", ExitCode.SYSTEM_FAULT,
            "DuckDB failed for a reason that is not the user's SQL."),
    SYSTEM_DRAIN_INCOMPLETE("system.pipeline.drain_incomplete", ExitCode.INCOMPLETE_DRAIN,
            "On SIGTERM/SIGINT the pipeline could not write and commit its buffered batch within drain_deadline_seconds."),
    SYSTEM_INTERNAL("system.internal.defect", ExitCode.SYSTEM_FAULT,
            "A defect in Mallard: please report it with the log.");

    private static final Map<String, ErrorCode> BY_CODE = Arrays.stream(values())
            .collect(Collectors.toUnmodifiableMap(ErrorCode::code, Function.identity()));

    private final String code;
    private final ExitCode exitCode;
    private final String description;

    ErrorCode(String code, ExitCode exitCode, String description) {
        this.code = code;
        this.exitCode = exitCode;
        this.description = description;
    }

    public String code() {
        return code;
    }

    public ExitCode exitCode() {
        return exitCode;
    }

    public String description() {
        return description;
    }

    /** {@code user} or {@code system}. */
    public String errorClass() {
        return code.substring(0, code.indexOf('.'));
    }

    /** The middle part of the code: {@code config}, {@code sql}, {@code sink}, ... */
    public String domain() {
        int first = code.indexOf('.');
        return code.substring(first + 1, code.indexOf('.', first + 1));
    }

    public static ErrorCode fromCode(String code) {
        ErrorCode found = BY_CODE.get(code);
        if (found == null) {
            throw new IllegalArgumentException("no error code " + code);
        }
        return found;
    }
}
