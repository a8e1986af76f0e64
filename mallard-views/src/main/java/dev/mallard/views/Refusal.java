// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;

/** The refusals of the compiler: each names the operator it met and what the user can do instead. */
final class Refusal {
    private Refusal() {}

    static MallardException unsupported(String view, String operator, String alternative) {
        return new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "materialized view " + view + ": " + operator
                + " is not maintained incrementally yet; " + alternative);
    }
}
