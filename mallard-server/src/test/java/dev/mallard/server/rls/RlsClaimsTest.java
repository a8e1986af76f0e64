// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RlsClaimsTest {
    @Test
    void accessIsReadAsTextOrAsJson() {
        RlsClaims fromText = RlsClaims.parse(Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"tenant_id = 'abc'\"]]"));
        RlsClaims fromJson = RlsClaims.parse(Map.of(RlsClaims.ACCESS, List.of(List.of("table", "orders", "*", "tenant_id = 'abc'"))));
        AccessGrant expected = new AccessGrant(AccessGrant.Kind.TABLE, "orders", Optional.of("tenant_id = 'abc'"));
        assertThat(fromText.grants()).containsExactly(expected);
        assertThat(fromJson.grants()).containsExactly(expected);
        assertThat(fromText.fromAccess()).isTrue();
    }

    @Test
    void aTrueFilterReadsEveryRow() {
        assertThat(RlsClaims.parse(Map.of(RlsClaims.ACCESS, "[[\"path\",\"s3://bucket/tenant1/\",\"*\",\"true\"]]")).grants())
                .containsExactly(new AccessGrant(AccessGrant.Kind.PATH, "s3://bucket/tenant1/", Optional.empty()));
    }

    @Test
    void legacyClaimsMakeOneGrantPerDatasourceWithTheFilterAndTheDefaults() {
        RlsClaims claims = RlsClaims.parse(Map.of(RlsClaims.TABLE, "orders", RlsClaims.PATH, "data/t1", RlsClaims.FILTER, "k = 1",
                RlsClaims.DATABASE, "db", RlsClaims.SCHEMA, "s"));
        assertThat(claims.grants()).containsExactlyInAnyOrder(new AccessGrant(AccessGrant.Kind.TABLE, "orders", Optional.of("k = 1")),
                new AccessGrant(AccessGrant.Kind.PATH, "data/t1", Optional.of("k = 1")));
        assertThat(claims.database()).contains("db");
        assertThat(claims.schema()).contains("s");
        assertThat(claims.fromAccess()).isFalse();
    }

    @Test
    void malformedAccessEntriesAreRefusedNamingTheEntry() {
        for (String access : List.of("{}", "[]", "[[\"table\",\"t\",\"*\"]]", "[[\"view\",\"t\",\"*\",\"true\"]]", "[[\"table\",\"t\",\" \",\"true\"]]",
                "[[\"table\",\"\",\"*\",\"true\"]]", "[[\"table\",\"t\",\"*\",\"\"]]", "[[\"table\",\"t\",\"*\",1]]", "not json")) {
            assertThatThrownBy(() -> RlsClaims.parse(Map.of(RlsClaims.ACCESS, access))).as(access).isInstanceOf(MallardException.class)
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
        }
    }

    @Test
    void aProjectionOtherThanStarIsKeptAsGivenAndStarIsEveryColumn() {
        assertThat(RlsClaims.parse(Map.of(RlsClaims.ACCESS, "[[\"table\",\"t\",\" id, k \",\"true\"]]")).grants())
                .containsExactly(new AccessGrant(AccessGrant.Kind.TABLE, "t", Optional.empty(), Optional.of("id, k")));
        assertThat(RlsClaims.parse(Map.of(RlsClaims.ACCESS, "[[\"table\",\"t\",\"*\",\"true\"]]")).grants().getFirst().projection()).isEmpty();
    }

    @Test
    void variablesAreBoundedInCountLengthAndCharacters() {
        assertThat(RlsClaims.parse(Map.of(RlsClaims.VARIABLES, "{\"tenant\":\"abc\",\"region\":\"us\"}")).variables())
                .containsExactlyInAnyOrderEntriesOf(Map.of("tenant", "abc", "region", "us"));
        Map<String, Object> many = new HashMap<>();
        for (int i = 0; i <= RlsClaims.MAX_VARIABLES; i++) {
            many.put("v" + i, "x");
        }
        assertInvalid(Map.of(RlsClaims.VARIABLES, many), "at most 64");
        assertInvalid(Map.of(RlsClaims.VARIABLES, Map.of("v", "x".repeat(RlsClaims.MAX_VARIABLE_CHARS + 1))), "at most 4096");
        assertInvalid(Map.of(RlsClaims.VARIABLES, Map.of("v", "a\nb")), "control characters");
        assertInvalid(Map.of(RlsClaims.VARIABLES, Map.of("v\t", "a")), "control characters");
        assertInvalid(Map.of(RlsClaims.VARIABLES, Map.of("v", 1)), "not a string");
        assertInvalid(Map.of(RlsClaims.VARIABLES, "[\"a\"]"), "JSON object");
        assertThat(RlsClaims.parse(Map.of(RlsClaims.VARIABLES, Map.of("v", "x".repeat(RlsClaims.MAX_VARIABLE_CHARS)))).variables()).hasSize(1);
    }

    private static void assertInvalid(Map<String, Object> claims, String message) {
        assertThatThrownBy(() -> RlsClaims.parse(claims)).isInstanceOf(MallardException.class).hasMessageContaining(message)
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_CLAIMS_INVALID);
    }
}
