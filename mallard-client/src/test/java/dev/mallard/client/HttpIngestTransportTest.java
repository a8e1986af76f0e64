// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HttpIngestTransportTest {
    @Test
    void retryAfterIsReadAsSecondsOrAsAnHttpDate() {
        assertThat(HttpIngestTransport.retryAfter("7")).contains(Duration.ofSeconds(7));
        assertThat(HttpIngestTransport.retryAfter("soon")).isEmpty();
        String inAMinute = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC).plusMinutes(1));
        assertThat(HttpIngestTransport.retryAfter(inAMinute).orElseThrow()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(61));
    }

    @Test
    void statusesAreSortedIntoRetryRejectAndAlreadyWritten() {
        assertThat(HttpIngestTransport.classify(429, Optional.of("2"), "").kind()).isEqualTo(SendOutcome.Kind.BUSY);
        assertThat(HttpIngestTransport.classify(429, Optional.of("2"), "").retryAfter()).contains(Duration.ofSeconds(2));
        assertThat(HttpIngestTransport.classify(503, Optional.empty(), "").kind()).isEqualTo(SendOutcome.Kind.UNREACHABLE);
        assertThat(HttpIngestTransport.classify(401, Optional.empty(), "").kind()).isEqualTo(SendOutcome.Kind.UNREACHABLE);
        assertThat(HttpIngestTransport.classify(404, Optional.empty(), "no queue q").kind()).isEqualTo(SendOutcome.Kind.REJECTED);
        assertThat(HttpIngestTransport.classify(415, Optional.empty(), "").kind()).isEqualTo(SendOutcome.Kind.REJECTED);
        // DazzleDuck refuses a batch id it has passed instead of acknowledging it again: it was written.
        assertThat(HttpIngestTransport.classify(400, Optional.empty(), "Out of sequence batch current 9, produced 8").kind())
                .isEqualTo(SendOutcome.Kind.ACKNOWLEDGED);
    }

    @Test
    void theLoginBodyIsJsonAndItsAnswerIsRead() {
        assertThat(Json.object(Map.of("username", "a\"b", "claims", Map.of("x-dd-access-type", "WRITE"))))
                .isIn("{\"username\":\"a\\\"b\",\"claims\":{\"x-dd-access-type\":\"WRITE\"}}", "{\"claims\":{\"x-dd-access-type\":\"WRITE\"},\"username\":\"a\\\"b\"}");
        assertThat(Json.members("{\"accessToken\":\"e.y.J\", \"nested\": {\"a\": [1, \"}\"]}, \"expiresIn\": 3600, \"tokenType\":\"Bearer\"}"))
                .containsEntry("accessToken", "e.y.J").containsEntry("expiresIn", "3600").containsEntry("tokenType", "Bearer")
                .doesNotContainKey("nested");
    }
}
