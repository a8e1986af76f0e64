// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** This process's peak resident set, as Linux keeps it (VmHWM); the process reads its own on the way out. */
final class PeakRss {
    private static final Path STATUS = Path.of("/proc/self/status");

    private PeakRss() {}

    /** VmHWM in KiB, or -1 where /proc/self/status does not exist or does not say. */
    static long selfKib() {
        if (!Files.isReadable(STATUS)) {
            return -1;
        }
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith("VmHWM:")) {
                    // "VmHWM:	  123456 kB"
                    return Long.parseLong(line.substring("VmHWM:".length()).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
