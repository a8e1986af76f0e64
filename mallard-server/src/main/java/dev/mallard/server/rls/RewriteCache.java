// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Row filter rewrites already made, shared by every session of one server's catalog ({@link CatalogCache}): a client
 * that repeats a statement, and every other session with the same claims, gets its rewrite without the DuckDB
 * round trips (serialise, deserialise) it costs.
 *
 * <p>It keeps two kinds of entry. A text's rewrite, by the text. And a shape's rewritten tree, by the shape
 * ({@link StatementShape}: the tree with its constants in slots), so that a text never seen whose shape is known
 * (the same dashboard query with another id) skips the rewrite itself and costs one serialise and one deserialise.
 *
 * <p>A rewrite depends on the statement's text (or shape), the rewriter's mode, the token's claims (grants, filters,
 * database, schema, variables) and the session's defaults (current catalog, schema and search path), all in the
 * {@link Key}, and on the catalog, which {@link CatalogCache} reads once and this cache lives and dies with. Only
 * successful rewrites are kept: a refusal is decided again each time. Bounded by the characters it holds (keys and
 * values of both kinds); the least recently used entry goes first.
 */
final class RewriteCache {
    /** Enough for thousands of dashboard statements; at two bytes a character, 16 MiB at most. */
    static final long DEFAULT_MAX_CHARS = 8L << 20;
    /** A text longer than this is rewritten each time rather than crowding out many short ones. */
    static final int MAX_TEXT_CHARS = 16_384;
    /** The same bound for a shape, which as JSON runs some ten times its text's length. */
    static final int MAX_SHAPE_CHARS = 16 * MAX_TEXT_CHARS;

    /**
     * What a rewrite depends on besides the statement and the catalog: the rewriter's mode, the token's claims and the
     * session's defaults. A session makes one and its hash once, since the claims hash deeply.
     */
    static final class Context {
        private final RowFilterRewriter.Mode mode;
        private final RlsClaims claims;
        private final CatalogSnapshot.SessionDefaults defaults;
        private final int hash;

        Context(RowFilterRewriter.Mode mode, RlsClaims claims, CatalogSnapshot.SessionDefaults defaults) {
            this.mode = requireNonNull(mode, "mode is null");
            this.claims = requireNonNull(claims, "claims is null");
            this.defaults = requireNonNull(defaults, "defaults is null");
            this.hash = java.util.Objects.hash(mode, claims, defaults);
        }

        @Override
        public boolean equals(Object other) {
            return this == other || other instanceof Context that && hash == that.hash && mode == that.mode && claims.equals(that.claims)
                    && defaults.equals(that.defaults);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Everything a rewrite depends on besides the catalog; {@code sql} is the text, or the shape's key. */
    record Key(Context context, String sql) {
        Key {
            requireNonNull(context, "context is null");
            requireNonNull(sql, "sql is null");
        }

        Key(RowFilterRewriter.Mode mode, RlsClaims claims, CatalogSnapshot.SessionDefaults defaults, String sql) {
            this(new Context(mode, claims, defaults), sql);
        }

        long chars() {
            return sql.length();
        }
    }

    private record Entry(boolean shape, Key key) {}

    /** A text's rewrite (a String) or a shape's rewritten tree (a JsonNode no one changes), with the characters it counts for. */
    private record Value(Object value, long chars) {}

    private final long maxChars;
    private final boolean shapes;
    private final LinkedHashMap<Entry, Value> entries = new LinkedHashMap<>(64, 0.75f, true);
    private long chars;

    RewriteCache() {
        this(DEFAULT_MAX_CHARS);
    }

    /** @param maxChars the characters of keys and values kept at most; a cache smaller than any entry keeps none */
    RewriteCache(long maxChars) {
        this(maxChars, true);
    }

    /**
     * @param shapes whether the rewriter goes through statement shapes; without, it rewrites each text's own tree
     *     (the reference the shape properties compare with)
     */
    RewriteCache(long maxChars, boolean shapes) {
        if (maxChars <= 0) {
            throw new IllegalArgumentException("maxChars must be positive, not " + maxChars);
        }
        this.maxChars = maxChars;
        this.shapes = shapes;
    }

    /** Whether the rewriter rewrites a statement's shape, kept here, rather than its own tree. */
    boolean shapes() {
        return shapes;
    }

    Optional<String> find(Key key) {
        return find(new Entry(false, key)).map(String.class::cast);
    }

    void put(Key key, String rewritten) {
        requireNonNull(rewritten, "rewritten is null");
        put(new Entry(false, key), new Value(rewritten, rewritten.length()), MAX_TEXT_CHARS);
    }

    /** The rewritten tree of a shape: the cache's own, which the caller copies before changing it. */
    Optional<ObjectNode> findShape(Key key) {
        return find(new Entry(true, key)).map(ObjectNode.class::cast);
    }

    /** Keeps a shape's rewritten tree, which no one may change after; it counts for its length as JSON. */
    void putShape(Key key, ObjectNode rewritten, long jsonChars) {
        requireNonNull(rewritten, "rewritten is null");
        put(new Entry(true, key), new Value(rewritten, jsonChars), MAX_SHAPE_CHARS);
    }

    private synchronized Optional<Object> find(Entry entry) {
        Value value = entries.get(entry);
        return value == null ? Optional.empty() : Optional.of(value.value());
    }

    private void put(Entry entry, Value value, int maxKeyChars) {
        long size = entry.key().chars() + value.chars();
        if (entry.key().sql().length() > maxKeyChars || size > maxChars) {
            return;
        }
        synchronized (this) {
            Value before = entries.put(entry, value);
            chars += size - (before == null ? 0 : entry.key().chars() + before.chars());
            Iterator<Map.Entry<Entry, Value>> eldest = entries.entrySet().iterator();
            while (chars > maxChars && eldest.hasNext()) {
                Map.Entry<Entry, Value> old = eldest.next();
                chars -= old.getKey().key().chars() + old.getValue().chars();
                eldest.remove();
            }
        }
    }

    synchronized int size() {
        return entries.size();
    }
}
