// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * The entry point of the processes {@code bench pipeline} measures, one consumer per process so that each starts
 * equally cold and its peak RSS is its own. Prints one {@link WorkerReport} as JSON on stdout; anything else goes to
 * stderr. Internal: the arguments are whatever {@link PipelineBench} passes.
 *
 * <pre>
 * bare     &lt;bootstrap&gt; &lt;topic&gt; &lt;group&gt; &lt;messages&gt;
 * pipeline &lt;config.yml&gt; &lt;messages&gt; [&lt;state query&gt;]
 * streams  &lt;bootstrap&gt; &lt;topic&gt; &lt;application id&gt; &lt;messages&gt; &lt;state dir&gt; rocksdb|in_memory
 * </pre>
 */
public final class BenchWorker {
    /** How long a worker may see no new message before it gives up. */
    static final Duration IDLE_LIMIT = Duration.ofSeconds(60);

    private BenchWorker() {}

    public static void main(String[] args) {
        int exit = 0;
        try {
            WorkerReport report = switch (args.length == 0 ? "" : args[0]) {
                case "bare" -> BareConsumerWorker.run(args[1], args[2], args[3], Long.parseLong(args[4]));
                case "pipeline" -> PipelineWorker.run(Path.of(args[1]), Long.parseLong(args[2]),
                        args.length > 3 ? Optional.of(args[3]) : Optional.empty());
                case "streams" -> StreamsWorker.run(args[1], args[2], args[3], Long.parseLong(args[4]), Path.of(args[5]),
                        StreamsWorker.Store.valueOf(args[6].toUpperCase(Locale.ROOT)));
                default -> throw new IllegalArgumentException("usage: BenchWorker bare|pipeline|streams ...");
            };
            System.out.println(report.toJson());
        } catch (Exception e) {
            e.printStackTrace();
            exit = 1;
        }
        System.out.flush();
        System.err.flush();
        // Client libraries leave non-daemon threads behind; the report is out, so the process ends here.
        System.exit(exit);
    }
}
