// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;

/**
 * One fault (or warning) found in a configuration file, with where it is.
 *
 * @param path the key path in the document, such as {@code pipeline.sink.type} ({@code ""} for the root)
 * @param line 1-based line in the rendered file, 0 when unknown
 * @param column 1-based column, 0 when unknown
 */
public record ConfigProblem(String file, int line, int column, String path, ErrorCode code, String message) {
    public ConfigProblem {
        requireNonNull(file, "file is null");
        requireNonNull(path, "path is null");
        requireNonNull(code, "code is null");
        requireNonNull(message, "message is null");
    }

    /** {@code file:line:col: code: message}, the form editors and terminals link to. */
    public String format() {
        return location() + ": " + code.code() + ": " + message;
    }

    public String location() {
        return line > 0 ? file + ":" + line + ":" + column : file;
    }
}
