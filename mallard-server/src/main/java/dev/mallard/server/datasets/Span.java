// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;

/** A width written as a number and a unit, {@code 30s}, {@code 5m}, {@code 24h}, {@code 14d}, {@code 1w}. */
final class Span {
    private Span() {}

    static Duration parse(String text, String key) {
        if (text == null || !text.matches("[0-9]+[smhdw]")) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key + " '" + text + "' is not a width such as 30s, 5m, 24h, 14d or 1w");
        }
        long amount = Long.parseLong(text.substring(0, text.length() - 1));
        Duration width = switch (text.charAt(text.length() - 1)) {
            case 's' -> Duration.ofSeconds(amount);
            case 'm' -> Duration.ofMinutes(amount);
            case 'h' -> Duration.ofHours(amount);
            case 'd' -> Duration.ofDays(amount);
            default -> Duration.ofDays(7 * amount);
        };
        if (width.isZero()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key + " '" + text + "' is zero; give a positive width");
        }
        return width;
    }
}
