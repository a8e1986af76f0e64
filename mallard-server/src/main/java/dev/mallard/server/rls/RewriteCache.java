// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Row filter rewrites already made, shared by every session of one server's catalog ({@link CatalogCache}): a client
 * that repeats a statement, and every other session with the same claims, gets its rewrite without the three DuckDB
 * round trips (serialise, catalog, deserialise) it costs.
 *
 * <p>A rewrite depends on the statement's text, the rewriter's mode, the token's claims (grants, filters, database,
 * schema, variables) and the session's defaults (current catalog, schema and search path), all in the {@link Key},
 * and on the catalog, which {@link CatalogCache} reads once and this cache lives and dies with. Only successful
 * rewrites are kept: a refusal is decided again each time. Bounded by the characters it holds; the least recently
 * used entry goes first.
 */
final class RewriteCache {
    /** Enough for thousands of dashboard statements; at two bytes a character, 16 MiB at most. */
    static final long DEFAULT_MAX_CHARS = 8L << 20;
    /** A text longer than this is rewritten each time rather than crowding out many short ones. */
    static final int MAX_TEXT_CHARS = 16_384;

    /** Everything a rewrite depends on besides the catalog. */
    record Key(RowFilterRewriter.Mode mode, RlsClaims claims, CatalogSnapshot.SessionDefaults defaults, String sql) {
        Key {
            requireNonNull(mode, "mode is null");
            requireNonNull(claims, "claims is null");
            requireNonNull(defaults, "defaults is null");
            requireNonNull(sql, "sql is null");
        }

        long chars() {
            return sql.length();
        }
    }

    private final long maxChars;
    private final LinkedHashMap<Key, String> entries = new LinkedHashMap<>(64, 0.75f, true);
    private long chars;

    RewriteCache() {
        this(DEFAULT_MAX_CHARS);
    }

    /** @param maxChars the characters of texts and rewrites kept at most; a cache smaller than any entry keeps none */
    RewriteCache(long maxChars) {
        if (maxChars <= 0) {
            throw new IllegalArgumentException("maxChars must be positive, not " + maxChars);
        }
        this.maxChars = maxChars;
    }

    synchronized Optional<String> find(Key key) {
        return Optional.ofNullable(entries.get(key));
    }

    void put(Key key, String rewritten) {
        requireNonNull(rewritten, "rewritten is null");
        long size = key.chars() + rewritten.length();
        if (key.sql().length() > MAX_TEXT_CHARS || size > maxChars) {
            return;
        }
        synchronized (this) {
            String before = entries.put(key, rewritten);
            chars += size - (before == null ? 0 : key.chars() + before.length());
            Iterator<Map.Entry<Key, String>> eldest = entries.entrySet().iterator();
            while (chars > maxChars && eldest.hasNext()) {
                Map.Entry<Key, String> entry = eldest.next();
                chars -= entry.getKey().chars() + entry.getValue().length();
                eldest.remove();
            }
        }
    }

    synchronized int size() {
        return entries.size();
    }
}
