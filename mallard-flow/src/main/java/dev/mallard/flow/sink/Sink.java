package dev.mallard.flow.sink;

/**
 * Where a pipeline delivers each batch's result. {@link #write} hands a batch over; {@link #flush} returns
 * once everything written is durable at the destination, so offsets may be committed after it.
 */
public interface Sink extends AutoCloseable {
    void write(ResultTable batch);

    void flush();

    @Override
    default void close() {}
}
