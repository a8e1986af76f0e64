// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Message;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch through the pipeline: load it, run the SQL, hand the result to the sink and flush. An empty
 * batch (or one of blank lines only) does nothing, and a result of no rows does not reach the sink.
 */
public final class BatchProcessor {
    private static final Logger LOG = LoggerFactory.getLogger(BatchProcessor.class);

    private final Handler handler;
    private final Sink sink;

    public BatchProcessor(Handler handler, Sink sink) {
        this.handler = requireNonNull(handler, "handler is null");
        this.sink = requireNonNull(sink, "sink is null");
    }

    /** @return the number of result rows delivered */
    public long process(List<Message> batch) {
        if (batch.stream().allMatch(Message::isBlank)) {
            return 0;
        }
        long started = System.nanoTime();
        handler.write(batch);
        long written = System.nanoTime();
        ResultTable result = handler.invoke();
        long invoked = System.nanoTime();
        if (!result.isEmpty()) {
            sink.write(result);
            sink.flush();
        }
        long flushed = System.nanoTime();
        LOG.debug("batch processed messages={} rows={} write_micros={} invoke_micros={} sink_micros={}", batch.size(), result.rows(),
                (written - started) / 1000, (invoked - written) / 1000, (flushed - invoked) / 1000);
        return result.rows();
    }
}
