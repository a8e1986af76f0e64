// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;

/**
 * A session's row-level security: the {@code x-dd-variables} its token sets, and under RESTRICTED or
 * RESTRICT_READ_ONLY the rewrite every statement goes through before DuckDB runs it.
 */
public final class RowLevelSecurity {
    private final RlsClaims claims;
    private final Optional<RowFilterRewriter> rewriter;

    private RowLevelSecurity(RlsClaims claims, Optional<RowFilterRewriter> rewriter) {
        this.claims = requireNonNull(claims, "claims is null");
        this.rewriter = requireNonNull(rewriter, "rewriter is null");
    }

    /**
     * What a token's claims impose on its session under the server's mode: nothing (empty) on a COMPLETE or
     * READ_ONLY server whose token sets no variables.
     *
     * @throws MallardException {@code user.access.claims_invalid} when a claim is malformed or the mode needs grants the
     *     token lacks
     */
    public static Optional<RowLevelSecurity> of(AccessMode mode, Map<String, Object> claims) {
        return of(mode, claims, new CatalogCache());
    }

    /** @param catalog the server's catalog as the rewriter reads it, read once and shared by its sessions */
    public static Optional<RowLevelSecurity> of(AccessMode mode, Map<String, Object> claims, CatalogCache catalog) {
        requireNonNull(mode, "mode is null");
        requireNonNull(catalog, "catalog is null");
        // COMPLETE and READ_ONLY read only the variables: other claims mean nothing there and are not checked.
        RlsClaims parsed = mode.rowLevelSecurity() ? RlsClaims.parse(claims) : RlsClaims.variablesOnly(claims);
        Optional<RowFilterRewriter> rewriter = switch (mode) {
            case COMPLETE, READ_ONLY -> Optional.empty();
            case RESTRICTED -> Optional.of(new RowFilterRewriter(RowFilterRewriter.Mode.RESTRICTED, parsed, catalog));
            case RESTRICT_READ_ONLY -> Optional.of(new RowFilterRewriter(RowFilterRewriter.Mode.RESTRICT_READ_ONLY, parsed, catalog));
        };
        if (rewriter.isEmpty() && parsed.variables().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new RowLevelSecurity(parsed, rewriter));
    }

    /** Whether claims given at login are well formed, for the mode: a malformed claim fails the login, not a later query. */
    public static void validate(AccessMode mode, Map<String, Object> claims) {
        of(mode, claims);
    }

    /** Sets the token's variables on the session's connection ({@code SET VARIABLE}), once, when the session opens. */
    public void open(Connection connection) {
        try (Statement statement = connection.createStatement()) {
            for (Map.Entry<String, String> variable : claims.variables().entrySet()) {
                statement.execute("SET VARIABLE " + SqlText.identifier(variable.getKey()) + " = " + SqlText.literal(variable.getValue()));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_ACCESS_CLAIMS_INVALID, RlsClaims.VARIABLES + " could not be set: " + e.getMessage(), e);
        }
    }

    /**
     * The text DuckDB runs for {@code sql}: under RESTRICTED and RESTRICT_READ_ONLY the rewrite that filters every
     * table it reads (see {@link RowFilterRewriter}); else {@code sql} itself.
     */
    public String admit(Connection connection, String sql) throws SQLException {
        if (rewriter.isEmpty()) {
            return sql;
        }
        return rewriter.get().rewrite(connection, sql);
    }

    /** Whether statements are rewritten (RESTRICTED, RESTRICT_READ_ONLY). */
    public boolean rewrites() {
        return rewriter.isPresent();
    }
}
