// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.Period;
import java.time.ZoneOffset;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** The hand-written formatting agrees with java.time, Long and BigDecimal, which the JSON rules are phrased in. */
class IsoFormatTest {
    private static final long MIN_DAY = LocalDate.MIN.toEpochDay();
    private static final long MAX_DAY = LocalDate.MAX.toEpochDay();

    @Property
    void aDateIsWhatLocalDatePrints(@ForAll @LongRange(min = -365_243_219_162L, max = 365_241_780_471L) long epochDay) {
        assertThat(text(out -> IsoFormat.appendDate(out, epochDay))).isEqualTo(LocalDate.ofEpochDay(epochDay).toString());
    }

    @Property
    void aDateNearTheCommonEraIsWhatLocalDatePrints(@ForAll @LongRange(min = -800_000, max = 3_000_000) long epochDay) {
        assertThat(text(out -> IsoFormat.appendDate(out, epochDay))).isEqualTo(LocalDate.ofEpochDay(epochDay).toString());
    }

    @Example
    void theRangeEndsOfLocalDateAgree() {
        for (long day : new long[] {MIN_DAY, MAX_DAY, 0, -1, -719_528, -719_529}) {
            assertThat(text(out -> IsoFormat.appendDate(out, day))).isEqualTo(LocalDate.ofEpochDay(day).toString());
        }
    }

    @Property
    void aDateTimeIsWhatLocalDateTimePrintsWithSecondsAlwaysPresent(
            @ForAll @LongRange(min = -62_135_596_800L * 3, max = 253_402_300_799L * 3) long epochSecond,
            @ForAll @IntRange(min = 0, max = 999_999_999) int nanos) {
        String expected = LocalDateTime.ofEpochSecond(epochSecond, nanos, ZoneOffset.UTC).toString();
        if (expected.length() - expected.indexOf('T') == 6) {
            expected += ":00";
        }
        assertThat(text(out -> IsoFormat.appendDateTime(out, epochSecond, nanos))).isEqualTo(expected);
    }

    @Property
    void aFractionOfASecondHasThreeSixOrNineDigits(@ForAll("wholeMillisMicrosOrNanos") int nanos) {
        String time = LocalDateTime.ofEpochSecond(1, nanos, ZoneOffset.UTC).toLocalTime().toString();
        String expected = nanos == 0 ? "" : time.substring(time.indexOf('.'));
        assertThat(text(out -> IsoFormat.appendFraction(out, nanos))).isEqualTo(expected);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Integer> wholeMillisMicrosOrNanos() {
        return net.jqwik.api.Arbitraries.oneOf(
                net.jqwik.api.Arbitraries.integers().between(0, 999).map(ms -> ms * 1_000_000),
                net.jqwik.api.Arbitraries.integers().between(0, 999_999).map(us -> us * 1000),
                net.jqwik.api.Arbitraries.integers().between(0, 999_999_999));
    }

    @Property
    void anIntervalIsAPeriodFollowedByADuration(@ForAll int months, @ForAll int days, @ForAll long nanos) {
        Period period = Period.of(0, months, days).normalized();
        Duration duration = Duration.ofNanos(nanos);
        String expected;
        if (period.isZero()) {
            expected = duration.toString();
        } else if (duration.isZero()) {
            expected = period.toString();
        } else {
            expected = period + duration.toString().substring(1);
        }
        long seconds = nanos / IsoFormat.NANOS_PER_SECOND;
        int fraction = (int) (nanos % IsoFormat.NANOS_PER_SECOND);
        assertThat(text(out -> IsoFormat.appendDuration(out, months, days, seconds, fraction))).isEqualTo(expected);
    }

    @Property
    void anOffsetIsWhatZoneOffsetNamesIt(@ForAll @IntRange(min = -18 * 3600, max = 18 * 3600) int seconds) {
        assertThat(text(out -> IsoFormat.appendOffset(out, seconds))).isEqualTo(ZoneOffset.ofTotalSeconds(seconds).getId());
    }

    @Property
    void aDecimalIsWhatBigDecimalPrintsPlain(@ForAll long unscaled, @ForAll @IntRange(min = 0, max = 40) int scale) {
        assertThat(text(out -> out.appendDecimal(unscaled, scale)))
                .isEqualTo(BigDecimal.valueOf(unscaled, scale).toPlainString());
    }

    @Example
    void theExtremeLongsPrintAsLongToStringDoes() {
        for (long value : new long[] {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 10, 9, 99, 100}) {
            assertThat(text(out -> out.appendLong(value))).isEqualTo(Long.toString(value));
            assertThat(text(out -> out.appendUnsignedLong(value))).isEqualTo(Long.toUnsignedString(value));
            assertThat(text(out -> out.appendDecimal(value, 3))).isEqualTo(BigDecimal.valueOf(value, 3).toPlainString());
        }
    }

    @Property
    void aLongIsWhatLongToStringPrints(@ForAll long value) {
        assertThat(text(out -> out.appendLong(value))).isEqualTo(Long.toString(value));
        assertThat(text(out -> out.appendUnsignedLong(value))).isEqualTo(Long.toUnsignedString(value));
    }

    @Property
    void paddingFillsToTheWidthAndNeverTruncates(@ForAll @LongRange(min = 0) long value, @ForAll @IntRange(min = 0, max = 25) int width) {
        String digits = Long.toString(value);
        assertThat(text(out -> out.appendPadded(value, width)))
                .isEqualTo("0".repeat(Math.max(0, width - digits.length())) + digits);
    }

    private interface Format {
        void appendTo(JsonOutput out);
    }

    private static String text(Format format) {
        JsonOutput out = new JsonOutput();
        out.append("junk").clear();
        format.appendTo(out);
        return new String(out.bytes(), 0, out.length(), US_ASCII);
    }
}
