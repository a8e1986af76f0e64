// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * CPU time a process has used, and the machine's load. On a shared machine wall time measures the neighbours too;
 * CPU time per message mostly does not, so the report carries both.
 */
final class ProcessCpu {
    private static final Path LOAD_AVERAGE = Path.of("/proc/loadavg");
    private static final Path STAT = Path.of("/proc/stat");
    /** The unit of /proc/stat, USER_HZ, which Linux fixes at 100 for user space. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    private ProcessCpu() {}

    /**
     * CPU time (user and system, all threads) of this process so far, or -1 where the platform does not say; to the
     * nanosecond where the JVM reads the process's CPU clock (/proc counts in 10 ms ticks, too coarse for one read).
     */
    static long selfNanos() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            if (nanos >= 0) {
                return nanos;
            }
        }
        return of(ProcessHandle.current());
    }

    /** The CPU time between two readings, or -1 when either is unknown. */
    static long between(long first, long last) {
        return first < 0 || last < 0 ? -1 : last - first;
    }

    static long of(ProcessHandle process) {
        return process.info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    /**
     * CPU time the whole machine has spent busy (user, nice, system, irq, softirq, steal over all cores), or -1
     * without /proc/stat. Less the broker's, the bench's and the worker's own, it is what other processes took.
     */
    static long machineBusyNanos() {
        try {
            for (String line : Files.readAllLines(STAT)) {
                if (line.startsWith("cpu ")) {
                    String[] ticks = line.substring(4).strip().split("\\s+");
                    long busy = 0;
                    for (int field : new int[] {0, 1, 2, 5, 6, 7}) {
                        busy += Long.parseLong(ticks[field]);
                    }
                    return busy * NANOS_PER_TICK;
                }
            }
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The one-minute load average, or -1 without /proc. */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(LOAD_AVERAGE).strip().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
