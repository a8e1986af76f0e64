// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.UserAccount;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClaimPolicyTest {
    private static final Map<String, Object> FIXED = Map.of(RlsClaims.TABLE, "orders", RlsClaims.FILTER, "tenant_id = 'abc'");
    private static final List<UserAccount> USERS = List.of(
            new UserAccount("fixed", PasswordHash.of("pw"), FIXED, List.of(RlsClaims.VARIABLES)),
            new UserAccount("open", PasswordHash.of("pw"), Map.of(), List.of(RlsClaims.ACCESS)),
            new UserAccount("none", PasswordHash.of("pw")));

    @Test
    void aUsersFixedClaimsAreAddedAndTheAllowedLoginClaimsKept() {
        ClaimPolicy policy = new ClaimPolicy(AccessMode.RESTRICT_READ_ONLY, USERS);
        assertThat(policy.effective("fixed", Map.of(RlsClaims.VARIABLES, "{\"a\":\"b\"}", "other", "kept")))
                .containsAllEntriesOf(FIXED).containsEntry(RlsClaims.VARIABLES, "{\"a\":\"b\"}").containsEntry("other", "kept");
        assertThat(policy.effective("open", Map.of(RlsClaims.ACCESS, "[[\"table\",\"t\",\"*\",\"true\"]]"))).containsKey(RlsClaims.ACCESS);
    }

    @Test
    void aLoginCannotChangeAFixedClaimNorGiveOneNotListed() {
        ClaimPolicy policy = new ClaimPolicy(AccessMode.RESTRICTED, USERS);
        assertRefused(() -> policy.effective("fixed", Map.of(RlsClaims.FILTER, "true")), "fixed by the server's configuration");
        assertRefused(() -> policy.effective("fixed", Map.of(RlsClaims.ACCESS, "[[\"table\",\"secrets\",\"*\",\"true\"]]")), "login_claims");
        assertRefused(() -> policy.effective("none", Map.of(RlsClaims.TABLE, "orders")), "may not give the claim x-dd-table");
        assertThat(policy.effective("fixed", Map.of(RlsClaims.TABLE, "orders"))).containsAllEntriesOf(FIXED);
    }

    @Test
    void completeAndReadOnlyPassLoginClaimsAsGiven() {
        for (AccessMode mode : List.of(AccessMode.COMPLETE, AccessMode.READ_ONLY)) {
            assertThat(new ClaimPolicy(mode, USERS).effective("none", Map.of(RlsClaims.TABLE, "x"))).containsEntry(RlsClaims.TABLE, "x");
        }
    }

    @Test
    void completeAndReadOnlyReadOnlyTheVariablesOfAToken() {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "not json", RlsClaims.VARIABLES, "{\"a\":\"b\"}");
        for (AccessMode mode : List.of(AccessMode.COMPLETE, AccessMode.READ_ONLY)) {
            assertThat(new ClaimPolicy(mode, USERS).forSession("none", claims)).get().extracting(RowLevelSecurity::rewrites).isEqualTo(false);
            assertThat(new ClaimPolicy(mode, USERS).forSession("none", Map.of(RlsClaims.ACCESS, "not json"))).isEmpty();
        }
        assertRefused(() -> new ClaimPolicy(AccessMode.RESTRICTED, List.of(new UserAccount("none", PasswordHash.of("pw"), Map.of(), List.of(RlsClaims.ACCESS))))
                .forSession("none", Map.of(RlsClaims.ACCESS, "not json")), "not JSON");
    }

    @Test
    void configuredClaimsTheModeCannotUseAreAConfigurationError() {
        List<UserAccount> users = List.of(new UserAccount("p", PasswordHash.of("pw"), Map.of(RlsClaims.ACCESS, "[[\"path\",\"/data/\",\"*\",\"true\"]]"),
                List.of()));
        assertThatThrownBy(() -> new ClaimPolicy(AccessMode.RESTRICT_READ_ONLY, users)).isInstanceOf(MallardException.class)
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID);
        assertThat(new ClaimPolicy(AccessMode.RESTRICTED, users).grantedPaths()).containsExactly("/data/");
        assertThatThrownBy(() -> new ClaimPolicy(AccessMode.RESTRICTED, List.of(new UserAccount("q", PasswordHash.of("pw"), Map.of(), List.of("sub")))))
                .hasMessageContaining("not a row-level security claim");
    }

    @Test
    void aPathGrantedAtLoginMustLieUnderTheUsersLoginPathsWhichDuckDbThenAdmits() {
        UserAccount user = new UserAccount("p", PasswordHash.of("pw"), Map.of(), List.of(RlsClaims.ACCESS, RlsClaims.PATH), List.of(),
                List.of("/data/tenants/"));
        ClaimPolicy policy = new ClaimPolicy(AccessMode.RESTRICTED, List.of(user));
        assertThat(policy.grantedPaths()).containsExactly("/data/tenants/");
        assertThat(policy.effective("p", Map.of(RlsClaims.ACCESS, "[[\"path\",\"/data/tenants/t1/\",\"*\",\"true\"]]")))
                .containsKey(RlsClaims.ACCESS);
        assertThat(policy.effective("p", Map.of(RlsClaims.PATH, "/data/tenants/t2"))).containsKey(RlsClaims.PATH);
        for (String outside : List.of("/data/other/", "/data/tenants/../secrets/", "/data/tenants-evil/", "s3://bucket/data/tenants/", "data/tenants/")) {
            assertRefused(() -> policy.checkLogin("p", Map.of(RlsClaims.PATH, outside)), "login_paths");
        }
        assertThatThrownBy(() -> new ClaimPolicy(AccessMode.RESTRICTED, List.of(new UserAccount("q", PasswordHash.of("pw"), Map.of(),
                List.of(RlsClaims.PATH), List.of(), List.of("relative/dir")))))
                .hasMessageContaining("not an absolute local directory");
    }

    private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOf(MallardException.class).hasMessageContaining(message)
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
    }
}
