// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Against a port nobody listens on: connections are refused, as when the server is down. */
class UnreachableServerTest {
    static final Schema ROWS = new Schema(List.of(Field.notNullable("id", new ArrowType.Int(64, true)), Field.nullable("note", ArrowType.Utf8.INSTANCE)));

    @TempDir
    Path spill;

    static URI nobodyListening() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }
    }

    private static ProducerOptions.Builder small() {
        return ProducerOptions.builder().maxBatchRows(10).maxBatchDelay(Duration.ofMinutes(1)).maxBufferedBytes(4096).initialBackoff(Duration.ofMillis(20))
                .maxBackoff(Duration.ofMillis(200)).requestTimeout(Duration.ofSeconds(2)).closeTimeout(Duration.ofMillis(300));
    }

    @Test
    void aFullProducerWithoutASpillDirectoryRefusesRowsWhenToldTo() throws Exception {
        ProducerOptions options = small().overflow(ProducerOptions.Overflow.REFUSE).build();
        try (HttpArrowProducer producer = HttpArrowProducer.builder(nobodyListening(), "q", ROWS).options(options).build()) {
            assertThatThrownBy(() -> {
                for (long i = 0; i < 100_000; i++) {
                    producer.addRow(i, "a note long enough to fill four kilobytes soon");
                }
            }).isInstanceOf(ProducerFullException.class).hasMessageContaining("maxBufferedBytes");
            assertThat(producer.stats().rowsRefused()).isEqualTo(1);
            assertThat(producer.stats().bufferedBytes()).isLessThan(4096 + ProducerOptions.DEFAULT_MAX_BATCH_BYTES);
        }
    }

    @Test
    void aBlockedRowGivesUpAfterMaxBlock() throws Exception {
        ProducerOptions options = small().overflow(ProducerOptions.Overflow.BLOCK).maxBlock(Duration.ofMillis(50)).build();
        try (HttpArrowProducer producer = HttpArrowProducer.builder(nobodyListening(), "q", ROWS).options(options).build()) {
            assertThatThrownBy(() -> {
                for (long i = 0; i < 100_000; i++) {
                    producer.addRow(i, "a note long enough to fill four kilobytes soon");
                }
            }).isInstanceOf(ProducerFullException.class).hasMessageContaining("PT0.05S");
        }
    }

    @Test
    void batchesSpilledWhileTheServerIsDownAreFoundByTheNextProducerWithTheSameId() throws Exception {
        URI down = nobodyListening();
        ProducerOptions options = small().producerId("spiller").spillDirectory(spill).overflow(ProducerOptions.Overflow.REFUSE).build();
        ProducerStats first;
        try (HttpArrowProducer producer = HttpArrowProducer.builder(down, "q", ROWS).options(options).build()) {
            for (long i = 0; i < 1000; i++) {
                producer.addRow(i, "a note long enough to fill four kilobytes soon");
            }
            assertThat(producer.flush(Duration.ofMillis(100))).isFalse();
            first = producer.stats();
        }
        assertThat(first.rowsAccepted()).isEqualTo(1000);
        assertThat(first.batchesSealed()).isEqualTo(100);
        assertThat(first.batchesLost()).isZero();
        List<Path> files;
        try (Stream<Path> list = Files.list(spill.resolve("spiller"))) {
            files = list.sorted().toList();
        }
        assertThat(files).hasSize(100).allSatisfy(f -> assertThat(f.getFileName().toString()).endsWith("-10.arrows.gz"));
        try (HttpArrowProducer again = HttpArrowProducer.builder(down, "q", ROWS).options(options).build()) {
            assertThat(again.stats().pendingBatches()).isEqualTo(100);
        }
    }
}
