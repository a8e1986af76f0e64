// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/**
 * Lists {@code bench} among the commands. The benchmarks live in the mallard-bench jar (they carry Kafka Streams
 * and the JDBC driver, which the CLI does not), which {@code ./mallard} at the root of a source checkout runs.
 */
@Command(name = "bench", description = {
    "Run Mallard's benchmarks (handlers, pipeline, views, server, postgres-sink); see docs/benchmarks.md.",
    "They are in the mallard-bench jar, not in this one: run './mallard bench --help' at the root of a source checkout,",
    "which builds and runs it."})
final class BenchCommand implements Callable<Integer> {
    @Unmatched
    List<String> arguments = new ArrayList<>();

    @Override
    public Integer call() {
        throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the benchmarks are not in this jar: run './mallard bench "
                + String.join(" ", arguments) + "' at the root of a source checkout (it builds mallard-bench)");
    }
}
