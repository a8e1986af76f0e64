// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import java.io.IOException;

/**
 * Writes one value of a vector it was built for, NULL included, as one JSON value. An encoder is built once
 * per column per schema (see {@link EncoderFactory}) and reused for every row, so the per-row work is only
 * reading the vector and writing bytes.
 */
interface ValueEncoder {
    void write(JsonOutput out, int index) throws IOException;
}
