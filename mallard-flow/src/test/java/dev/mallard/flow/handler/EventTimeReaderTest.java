// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.flow.handler.RecordColumns.EventTime;
import dev.mallard.flow.handler.RecordColumns.EventTimeFormat;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

class EventTimeReaderTest {
    private static final long AT = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.parse("2015-12-12T19:11:01Z"));

    private static long read(String path, EventTimeFormat format, String json) {
        return new EventTimeReader(new EventTime(path, format)).read(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void rfc3339WithAnOffsetAFractionOrASpace() {
        assertThat(read("ts", EventTimeFormat.RFC3339, "{\"ts\":\"2015-12-12T19:11:01Z\"}")).isEqualTo(AT);
        assertThat(read("ts", EventTimeFormat.RFC3339, "{\"ts\":\"2015-12-12T21:11:01+02:00\"}")).isEqualTo(AT);
        assertThat(read("ts", EventTimeFormat.RFC3339, "{\"ts\":\"2015-12-12 19:11:01.2495678z\"}")).isEqualTo(AT + 249_567);
    }

    @Test
    void unixSecondsAndMillisAsNumbersOrStrings() {
        assertThat(read("at", EventTimeFormat.UNIX_SECONDS, "{\"at\":1449947461}")).isEqualTo(AT);
        assertThat(read("at", EventTimeFormat.UNIX_SECONDS, "{\"at\":\"1449947461.000001\"}")).isEqualTo(AT + 1);
        assertThat(read("at", EventTimeFormat.UNIX_MILLIS, "{\"at\":1449947461123}")).isEqualTo(AT + 123_000);
    }

    @Test
    void unixMicrosAsBlueskysJetstreamWritesTimeUs() {
        assertThat(read("time_us", EventTimeFormat.UNIX_MICROS, "{\"time_us\":1449947461123456}")).isEqualTo(AT + 123_456);
        assertThat(read("time_us", EventTimeFormat.UNIX_MICROS, "{\"time_us\":\"1449947461000001\"}")).isEqualTo(AT + 1);
        assertThat(RecordColumns.EventTimeFormat.parse("unix_us")).isEqualTo(EventTimeFormat.UNIX_MICROS);
    }

    @Test
    void aDottedPathReadsANestedFieldAndSkipsEverythingElse() {
        assertThat(read("meta.ts", EventTimeFormat.RFC3339,
                "{\"ts\":\"ignored\",\"list\":[{\"meta\":1}],\"meta\":{\"other\":{\"ts\":2},\"ts\":\"2015-12-12T19:11:01Z\"}}"))
                .isEqualTo(AT);
    }

    @Test
    void aMissingNullOrMalformedTimeNamesThePath() {
        assertThatThrownBy(() -> read("meta.ts", EventTimeFormat.RFC3339, "{\"meta\":{}}"))
                .hasMessageContaining("the field meta.ts is missing or null");
        assertThatThrownBy(() -> read("ts", EventTimeFormat.RFC3339, "{\"ts\":null}"))
                .hasMessageContaining("the field ts is missing or null");
        assertThatThrownBy(() -> read("ts", EventTimeFormat.RFC3339, "{\"ts\":\"yesterday\"}"))
                .hasMessageContaining("holds \"yesterday\", which is not an RFC 3339 time");
        assertThatThrownBy(() -> read("ts", EventTimeFormat.UNIX_MILLIS, "{\"ts\":{\"a\":1}}"))
                .hasMessageContaining("holds \"an object\"");
        assertThatThrownBy(() -> read("ts", EventTimeFormat.UNIX_MILLIS, "{\"ts\":"))
                .hasMessageContaining("not valid JSON");
    }
}
