// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.session.Session;
import dev.mallard.server.sql.AccessPolicy;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Split planning, DazzleDuck's {@code /v1/plan} and split {@code GetFlightInfo}: a query over Parquet files becomes
 * splits, each a signed descriptor (DazzleDuck's statement handle: {@code query}, {@code queryId}, {@code producerId},
 * {@code splitSize}, {@code queryChecksum}) that a Flight DoGet or {@code /v1/query} runs. A query is checked by the
 * access policy when planned, and each split's SQL again when it runs; the checksum (HMAC-SHA256 of
 * {@code queryId:query} under the server's signing secret) refuses a descriptor changed after planning.
 */
public final class SplitPlanner {
    /** DazzleDuck's header (or query parameter): the bytes of Parquet one split reads; absent or 0 plans one split. */
    public static final String SPLIT_SIZE = "x-dd-split-size";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HMAC = "HmacSHA256";

    private final byte[] secret;
    private final String producerId;
    private final AtomicLong nextQueryId = new AtomicLong();

    public SplitPlanner(byte[] secret, String producerId) {
        requireNonNull(secret, "secret is null");
        this.secret = secret.clone();
        this.producerId = requireNonNull(producerId, "producerId is null");
    }

    /** A planner whose descriptors only it accepts: a secret of its own, drawn at random. */
    public static SplitPlanner unshared() {
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        return new SplitPlanner(secret, "mallard");
    }

    /**
     * One split of a plan: its descriptor as DazzleDuck's statement handle JSON, and what it reads.
     *
     * @param size the bytes of its files, -1 for the whole query unsplit
     */
    public record Split(String query, long queryId, long size, String descriptor) {
        public Split {
            requireNonNull(query, "query is null");
            requireNonNull(descriptor, "descriptor is null");
        }
    }

    /** {@code x-dd-split-size}: absent is 0, one split of the whole query. */
    public static long splitSize(Optional<String> value) {
        if (value.isEmpty() || value.get().isBlank()) {
            return 0;
        }
        try {
            long size = Long.parseLong(value.get().trim());
            if (size < 0) {
                throw new NumberFormatException();
            }
            return size;
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, SPLIT_SIZE + " " + value.get().trim()
                    + " is not a number of bytes; give a whole number, 0 or none for one split");
        }
    }

    /**
     * Plans {@code sql} for the session: refused as running it would be ({@code policy.check(session, session.admit(sql))}),
     * then split over its Parquet files when {@code splitSize > 0} and the query splits (else one split, the query, a
     * {@code read_delta} call in it read as the Delta table's live files).
     */
    public List<Split> plan(Session session, AccessPolicy policy, String sql, long splitSize) {
        requireNonNull(session, "session is null");
        requireNonNull(policy, "policy is null");
        requireNonNull(sql, "sql is null");
        dev.mallard.server.sql.CheckedSql checked = policy.check(session, session.admit(sql));
        if (checked.throughViews()) {
            throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "a materialized view statement or dbsp_ call does not split; run it with "
                    + "/v1/query or a plain GetFlightInfo");
        }
        dev.mallard.core.sql.ClassifiedStatement first = checked.classification().statements().getFirst();
        if (first.kind() == dev.mallard.core.sql.StatementKind.UNPARSED) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, first.problem().orElse("the query does not parse"));
        }
        List<ParquetSplits.Planned> planned = session.sql(connection -> ParquetSplits.plan(connection, sql, splitSize));
        return planned.stream().map(split -> split(split.sql(), split.size())).toList();
    }

    /** Whether a checked text is one query, which a split GetFlightInfo plans; any other runs as without a split size. */
    public static boolean plannable(dev.mallard.server.sql.CheckedSql checked) {
        return !checked.throughViews() && checked.classification().single()
                && checked.classification().statement().kind() == dev.mallard.core.sql.StatementKind.QUERY;
    }

    private Split split(String sql, long size) {
        long id = nextQueryId.incrementAndGet();
        ObjectNode handle = JSON.createObjectNode();
        handle.put("query", sql);
        handle.put("queryId", id);
        handle.put("producerId", producerId);
        handle.put("splitSize", size);
        handle.put("queryChecksum", checksum(id, sql));
        return new Split(sql, id, size, handle.toString());
    }

    /** DazzleDuck's {@code /v1/plan} answer: each split's HTTP endpoints and descriptor. */
    public static String answer(List<Split> splits, List<String> endpoints) {
        ArrayNode answer = JSON.createArrayNode();
        for (Split split : splits) {
            ObjectNode entry = answer.addObject();
            ArrayNode urls = entry.putArray("endpoints");
            endpoints.forEach(urls::add);
            try {
                entry.putObject("descriptor").set("statementHandle", JSON.readTree(split.descriptor()));
            } catch (java.io.IOException e) {
                throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "a split descriptor does not read back", e);
            }
        }
        return answer.toString();
    }

    /** Whether a Flight ticket's statement handle is a split descriptor (JSON) rather than a handle the session keeps. */
    public static boolean isDescriptor(String handle) {
        return handle.startsWith("{");
    }

    /**
     * The SQL of a split descriptor this server (or one sharing its secret) planned.
     *
     * @throws MallardException {@code user.access.denied} when the descriptor is not one, or was changed
     */
    public String verifiedSql(String descriptor) {
        JsonNode handle;
        try {
            handle = JSON.readTree(descriptor);
        } catch (java.io.IOException e) {
            throw forged("it is not JSON");
        }
        JsonNode query = handle.path("query");
        JsonNode id = handle.path("queryId");
        JsonNode checksum = handle.path("queryChecksum");
        if (!query.isTextual() || !id.canConvertToLong() || !checksum.isTextual()) {
            throw forged("it lacks its query, queryId or queryChecksum");
        }
        byte[] expected = checksum(id.asLong(), query.asText()).getBytes(StandardCharsets.US_ASCII);
        if (!MessageDigest.isEqual(expected, checksum.asText().getBytes(StandardCharsets.US_ASCII))) {
            throw forged("its queryChecksum does not match its query");
        }
        return query.asText();
    }

    private static MallardException forged(String why) {
        return new MallardException(ErrorCode.USER_ACCESS_DENIED, "the split descriptor was not planned by this server: " + why
                + "; plan the query again (POST /v1/plan or GetFlightInfo with " + SPLIT_SIZE + ") and run the descriptor as given");
    }

    private String checksum(long id, String sql) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(secret, HMAC));
            return Base64.getEncoder().encodeToString(mac.doFinal((id + ":" + sql).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "HMAC-SHA256 is not available", e);
        }
    }
}
