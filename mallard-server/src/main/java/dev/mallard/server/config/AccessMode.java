// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

/** What statements a server admits. */
public enum AccessMode {
    /** Any statement DuckDB runs. */
    COMPLETE,
    /** Queries only (SELECT, set operations, CTEs), decided on DuckDB's parse tree. */
    READ_ONLY,
    /** SELECT on the one datasource a token's claims grant, its row filter applied (see {@code dev.mallard.server.rls}). */
    RESTRICTED,
    /** SELECT on any table, each table's row filter from the token's claims applied; tables no claim names read as empty. */
    RESTRICT_READ_ONLY;

    /** Whether statements go through the row filter rewrite of the session's token. */
    public boolean rowLevelSecurity() {
        return this == RESTRICTED || this == RESTRICT_READ_ONLY;
    }
}
