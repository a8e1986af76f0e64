// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

/** The process exit codes of the {@code mallard} command, listed in {@code docs/errors.md}. */
public enum ExitCode {
    OK(0, "Success."),
    SYSTEM_FAULT(1, "A fault in the environment or in Mallard itself."),
    USAGE(2, "The command line itself is malformed (unknown command or option)."),
    USER_FAULT(10, "A fault the user must fix: configuration, SQL or input data."),
    SINK_UNREACHABLE(12, "The sink could not be reached within its retry ladder, or the source's brokers within their deadline."),
    INCOMPLETE_DRAIN(15, "A shutdown could not write and commit the buffered batch within the drain deadline.");

    private final int code;
    private final String meaning;

    ExitCode(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    public int code() {
        return code;
    }

    public String meaning() {
        return meaning;
    }
}
