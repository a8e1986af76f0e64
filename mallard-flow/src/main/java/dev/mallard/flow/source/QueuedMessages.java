// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** {@link Source#poll} for sources whose receiving threads put messages on a queue (webhook, WebSocket). */
public final class QueuedMessages {
    private QueuedMessages() {}

    /** Waits up to the timeout for a first message, then takes what else is queued, up to {@code max} in all. */
    public static List<Message> poll(BlockingQueue<Message> queue, Duration timeout, int max) {
        List<Message> messages = new ArrayList<>();
        try {
            Message first = queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (first == null) {
                return messages;
            }
            messages.add(first);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return messages;
        }
        queue.drainTo(messages, Math.max(0, max - 1));
        return messages;
    }
}
