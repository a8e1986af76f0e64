// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.util.Comparator;
import java.util.List;

/** Every round of one contender; the figures are the median round's, the peak RSS the largest of any. */
record Measurement(List<Round> rounds) {
    /**
     * One run of a worker and the CPU seconds used meanwhile by the broker and by everything other than the broker,
     * the worker and the bench (-1 when unknown); on a quiet machine the second is near zero.
     */
    record Round(WorkerReport report, double brokerCpuSeconds, double otherCpuSeconds) {
        Round {
            requireNonNull(report, "report is null");
        }
    }

    Measurement {
        rounds = List.copyOf(requireNonNull(rounds, "rounds is null"));
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("rounds is empty");
        }
    }

    /** The round with the median rate; of two middle rounds, the slower. */
    Round median() {
        List<Round> sorted = rounds.stream().sorted(Comparator.comparingDouble(round -> round.report().messagesPerSecond())).toList();
        return sorted.get((sorted.size() - 1) / 2);
    }

    WorkerReport report() {
        return median().report();
    }

    double messagesPerSecond() {
        return report().messagesPerSecond();
    }

    double slowest() {
        return rounds.stream().mapToDouble(round -> round.report().messagesPerSecond()).min().orElseThrow();
    }

    double fastest() {
        return rounds.stream().mapToDouble(round -> round.report().messagesPerSecond()).max().orElseThrow();
    }

    /** The largest peak RSS of any round, in MiB; -1 when unknown. */
    double peakRssMib() {
        return rounds.stream().mapToDouble(round -> round.report().peakRssMib()).max().orElseThrow();
    }
}
