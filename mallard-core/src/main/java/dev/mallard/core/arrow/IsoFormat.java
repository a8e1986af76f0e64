// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

/**
 * ISO-8601 text for dates, times and durations, appended to a {@link JsonOutput} without allocating.
 * The output matches {@code java.time}'s {@code toString} (proleptic Gregorian calendar, fraction in groups
 * of three digits) except that seconds are always present, and it does not fail for years outside
 * {@code java.time}'s range.
 */
final class IsoFormat {
    static final long NANOS_PER_SECOND = 1_000_000_000L;
    static final long NANOS_PER_DAY = 86_400L * NANOS_PER_SECOND;
    private static final long SECONDS_PER_DAY = 86_400L;
    // Days from 0000-03-01 to 1970-01-01: the calendar arithmetic below counts years from March.
    private static final long DAYS_0000_03_01_TO_EPOCH = 719_468L;
    private static final long DAYS_PER_400_YEARS = 146_097L;

    private IsoFormat() {}

    /** {@code 2020-01-31}; years beyond 9999 get a {@code +}, years before 1 are negative (1 BC is 0000). */
    static void appendDate(JsonOutput out, long epochDay) {
        long shifted = epochDay + DAYS_0000_03_01_TO_EPOCH;
        long era = Math.floorDiv(shifted, DAYS_PER_400_YEARS);
        long dayOfEra = shifted - era * DAYS_PER_400_YEARS;
        long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        long monthFromMarch = (5 * dayOfYear + 2) / 153;
        long day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1;
        long month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        if (year >= 0 && year <= 9999) {
            out.appendTwoDigits((int) year / 100).appendTwoDigits((int) year % 100);
        } else if (year < 0) {
            out.append('-').appendPadded(-year, 4);
        } else {
            out.append('+').appendPadded(year, 4);
        }
        out.append('-').appendTwoDigits((int) month).append('-').appendTwoDigits((int) day);
    }

    /** {@code 12:00:01} or {@code 12:00:01.5}; DuckDB allows {@code 24:00:00}, which is kept as is. */
    static void appendTime(JsonOutput out, long nanoOfDay) {
        if (nanoOfDay < 0 || nanoOfDay >= 100 * 3600 * NANOS_PER_SECOND) {
            // Not a time of day: Arrow forbids it, but say what the value is rather than print garbage.
            appendDuration(out, 0, 0, nanoOfDay / NANOS_PER_SECOND, (int) (nanoOfDay % NANOS_PER_SECOND));
            return;
        }
        int seconds = (int) (nanoOfDay / NANOS_PER_SECOND);
        out.appendTwoDigits(seconds / 3600).append(':')
                .appendTwoDigits(seconds / 60 % 60).append(':')
                .appendTwoDigits(seconds % 60);
        appendFraction(out, (int) (nanoOfDay % NANOS_PER_SECOND));
    }

    /** {@code 2015-12-12T19:11:01.249}: a local date-time, seconds since the epoch plus nanoseconds. */
    static void appendDateTime(JsonOutput out, long epochSecond, int nanos) {
        appendDate(out, Math.floorDiv(epochSecond, SECONDS_PER_DAY));
        appendTimeOfDateTime(out, epochSecond, nanos);
    }

    /** {@link #appendDateTime} with the date taken from a cache of the last one formatted. */
    static void appendDateTime(JsonOutput out, LastDate dates, long epochSecond, int nanos) {
        dates.appendTo(out, Math.floorDiv(epochSecond, SECONDS_PER_DAY));
        appendTimeOfDateTime(out, epochSecond, nanos);
    }

    private static void appendTimeOfDateTime(JsonOutput out, long epochSecond, int nanos) {
        out.append('T');
        appendTime(out, Math.floorMod(epochSecond, SECONDS_PER_DAY) * NANOS_PER_SECOND + nanos);
    }

    /**
     * The text of the last date formatted. Dates and timestamps in a batch mostly share their day, and the
     * calendar arithmetic is the costliest part of formatting them. One per encoder, never shared.
     */
    static final class LastDate {
        // The longest date: a sign, the twelve-digit years of a long count of seconds, -MM-DD.
        private static final int MAX_LENGTH = 24;
        private final byte[] text = new byte[MAX_LENGTH];
        private int textLength;
        private long epochDay;
        private boolean set;

        void appendTo(JsonOutput out, long epochDay) {
            if (set && epochDay == this.epochDay) {
                out.append(text, 0, textLength);
                return;
            }
            // Reserved up front so the date lands in one piece and can be copied back out.
            out.ensure(MAX_LENGTH);
            int start = out.length();
            appendDate(out, epochDay);
            textLength = out.length() - start;
            System.arraycopy(out.bytes(), start, text, 0, textLength);
            this.epochDay = epochDay;
            set = true;
        }
    }

    /** A fraction of a second in groups of three digits, nothing when zero, as {@code LocalTime} prints it. */
    static void appendFraction(JsonOutput out, int nanos) {
        if (nanos == 0) {
            return;
        }
        out.append('.');
        if (nanos % 1_000_000 == 0) {
            out.appendPadded(nanos / 1_000_000, 3);
        } else if (nanos % 1000 == 0) {
            out.appendPadded(nanos / 1000, 6);
        } else {
            out.appendPadded(nanos, 9);
        }
    }

    /** A zone offset as {@code ZoneOffset} names it: {@code Z}, {@code +01:00}, {@code -05:30:15}. */
    static void appendOffset(JsonOutput out, int totalSeconds) {
        if (totalSeconds == 0) {
            out.append('Z');
            return;
        }
        int abs = Math.abs(totalSeconds);
        out.append(totalSeconds < 0 ? '-' : '+').appendPadded(abs / 3600, 2).append(':').appendPadded(abs / 60 % 60, 2);
        if (abs % 60 != 0) {
            out.append(':').appendPadded(abs % 60, 2);
        }
    }

    /**
     * An ISO-8601 duration such as {@code P1Y2M3DT4H5M6.5S}. Months are split into years and months (a year is
     * always twelve months) but days are never folded into months nor hours into days, because their lengths vary;
     * the time part is hours, minutes and seconds with the fraction trimmed. Each component carries its own sign,
     * as in {@code java.time} ({@code P-1M2D}, {@code PT-1H-30M}); zero is {@code PT0S}. The time part is
     * {@code seconds + nanos / 10^9} where both have the same sign.
     */
    static void appendDuration(JsonOutput out, long months, long days, long seconds, int nanos) {
        out.append('P');
        if (months == 0 && days == 0 && seconds == 0 && nanos == 0) {
            out.append("T0S");
            return;
        }
        if (months / 12 != 0) {
            out.appendLong(months / 12).append('Y');
        }
        if (months % 12 != 0) {
            out.appendLong(months % 12).append('M');
        }
        if (days != 0) {
            out.appendLong(days).append('D');
        }
        if (seconds == 0 && nanos == 0) {
            return;
        }
        out.append('T');
        if (seconds / 3600 != 0) {
            out.appendLong(seconds / 3600).append('H');
        }
        if (seconds / 60 % 60 != 0) {
            out.appendLong(seconds / 60 % 60).append('M');
        }
        long secondsOfMinute = seconds % 60;
        if (secondsOfMinute == 0 && nanos == 0) {
            return;
        }
        if (secondsOfMinute == 0 && nanos < 0) {
            out.append('-');
        }
        out.appendLong(secondsOfMinute);
        if (nanos != 0) {
            out.append('.');
            int fraction = Math.abs(nanos);
            int digits = 9;
            while (fraction % 10 == 0) {
                fraction /= 10;
                digits--;
            }
            out.appendPadded(fraction, digits);
        }
        out.append('S');
    }
}
