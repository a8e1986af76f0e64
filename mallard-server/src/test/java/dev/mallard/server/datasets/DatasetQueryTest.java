package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DatasetQueryTest {
    @Test
    void roundingUpKeepsATimeOnABoundaryAndMovesAnyOtherToTheNext() {
        Duration five = Duration.ofMinutes(5);
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:05:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00.001Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00.000000001Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("1969-12-31T23:58:00Z"), five)).isEqualTo(Instant.parse("1970-01-01T00:00:00Z"));
    }
}
