package dev.mallard.server.config;

/** What statements a server admits. */
public enum AccessMode {
    /** Any statement DuckDB runs. */
    COMPLETE,
    /** Queries only (SELECT, set operations, CTEs), decided on DuckDB's parse tree. */
    READ_ONLY,
    /** Row filters from JWT claims: not available yet, refused at startup. */
    RESTRICTED,
    /** READ_ONLY with row filters: not available yet, refused at startup. */
    RESTRICT_READ_ONLY;

    public boolean available() {
        return this == COMPLETE || this == READ_ONLY;
    }
}
