// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a measured child process reports on stdout, as one JSON object: how many messages it handled between the
 * first one arriving and the last one being done, the CPU time it used in that interval and in its whole life until
 * the report (-1 when unknown), its peak resident set, what it counted per city (empty when it
 * cannot tell) and, for a Mallard pipeline, the seconds each phase of its batches took within that interval.
 */
record WorkerReport(long messages, long elapsedNanos, long cpuNanos, long lifetimeCpuNanos, long peakRssKib, Map<String, Long> counts, Map<String, Double> phaseSeconds) {
    private static final ObjectMapper JSON = new ObjectMapper();

    WorkerReport {
        if (elapsedNanos <= 0) {
            throw new IllegalArgumentException("elapsedNanos must be positive, was " + elapsedNanos);
        }
        counts = Map.copyOf(requireNonNull(counts, "counts is null"));
        phaseSeconds = Map.copyOf(requireNonNull(phaseSeconds, "phaseSeconds is null"));
    }

    double seconds() {
        return elapsedNanos / 1e9;
    }

    double messagesPerSecond() {
        return messages / seconds();
    }

    /** CPU seconds used in the measured interval, or -1 where the platform does not say. */
    double cpuSeconds() {
        return cpuNanos < 0 ? -1 : cpuNanos / 1e9;
    }

    /** Peak RSS in MiB, or -1 where the platform does not say. */
    double peakRssMib() {
        return peakRssKib < 0 ? -1 : peakRssKib / 1024.0;
    }

    String toJson() {
        ObjectNode node = JSON.createObjectNode();
        node.put("messages", messages);
        node.put("elapsed_nanos", elapsedNanos);
        node.put("cpu_nanos", cpuNanos);
        node.put("lifetime_cpu_nanos", lifetimeCpuNanos);
        node.put("peak_rss_kib", peakRssKib);
        ObjectNode countNode = node.putObject("counts");
        new TreeMap<>(counts).forEach(countNode::put);
        ObjectNode phaseNode = node.putObject("phases_s");
        new TreeMap<>(phaseSeconds).forEach(phaseNode::put);
        return node.toString();
    }

    static WorkerReport fromJson(String text) {
        try {
            JsonNode node = JSON.readTree(text);
            Map<String, Long> counts = new LinkedHashMap<>();
            node.path("counts").properties().forEach(entry -> counts.put(entry.getKey(), entry.getValue().asLong()));
            Map<String, Double> phases = new LinkedHashMap<>();
            node.path("phases_s").properties().forEach(entry -> phases.put(entry.getKey(), entry.getValue().asDouble()));
            return new WorkerReport(node.path("messages").asLong(), node.path("elapsed_nanos").asLong(), node.path("cpu_nanos").asLong(-1),
                    node.path("lifetime_cpu_nanos").asLong(-1),
                    node.path("peak_rss_kib").asLong(-1),
                    counts, phases);
        } catch (IOException e) {
            throw new UncheckedIOException("a worker printed something that is not its report: " + text, e);
        }
    }
}
