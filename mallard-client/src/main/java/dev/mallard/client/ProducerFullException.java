// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

/** A row was not taken because the producer's memory (and spill directory, if any) is full. */
public final class ProducerFullException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProducerFullException(String message) {
        super(message);
    }
}
