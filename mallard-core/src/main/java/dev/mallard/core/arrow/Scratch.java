// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import org.apache.arrow.vector.util.ReusableByteArray;

/**
 * Buffers one writer's encoders share. Encoders run one at a time and are done with a buffer before the next
 * encoder runs, so one set per writer is enough and no value allocates its own.
 */
final class Scratch {
    final ReusableByteArray bytes = new ReusableByteArray();
    private byte[] fixed = new byte[32];

    /** A byte array of at least {@code size} bytes, for fixed-width binary values. */
    byte[] fixed(int size) {
        if (fixed.length < size) {
            fixed = new byte[Math.max(size, 2 * fixed.length)];
        }
        return fixed;
    }
}
