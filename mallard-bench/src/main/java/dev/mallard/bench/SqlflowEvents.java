// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** SQLFlow's test event shape, half New York and half Baltimore, generated rather than downloaded. */
final class SqlflowEvents {
    private SqlflowEvents() {}

    static byte[] event(long i) {
        String city = i % 2 == 0 ? "New York" : "Baltimore";
        return ("{\"ip\":\"10.0." + (i % 250) + "." + (i % 199) + "\",\"event\":\"search\",\"properties\":{\"city\":\"" + city
                + "\",\"country\":\"US\"},\"timestamp\":\"2024-01-01T00:00:" + String.format("%02d", i % 60)
                + "Z\",\"type\":\"track\",\"userId\":\"user-" + i + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    static List<byte[]> events(int count) {
        List<byte[]> events = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            events.add(event(i));
        }
        return events;
    }
}
