// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ProducerOptionsTest {
    @Test
    void defaultsAreTheDocumentedConstants() {
        ProducerOptions o = ProducerOptions.defaults();
        assertThat(o.maxBatchRows()).isEqualTo(10_000);
        assertThat(o.maxBatchBytes()).isEqualTo(4L << 20);
        assertThat(o.maxBatchDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(o.maxBufferedBytes()).isEqualTo(64L << 20);
        assertThat(o.overflow()).isEqualTo(ProducerOptions.Overflow.BLOCK);
        assertThat(o.maxBlock()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.spillDirectory()).isEmpty();
        assertThat(o.maxSpillBytes()).isEqualTo(1L << 30);
        assertThat(o.requestTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.initialBackoff()).isEqualTo(Duration.ofMillis(100));
        assertThat(o.maxBackoff()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.closeTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.producerId()).startsWith("producer-");
    }

    @Test
    void aProducerIdThatCannotNameASpillDirectoryIsRefusedWhenBuilt() {
        assertThatThrownBy(() -> ProducerOptions.builder().producerId("../up").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("producerId");
        assertThatThrownBy(() -> ProducerOptions.builder().maxBatchRows(0).build()).hasMessageContaining("maxBatchRows");
        assertThatThrownBy(() -> ProducerOptions.builder().maxBackoff(Duration.ofMillis(1)).build()).hasMessageContaining("maxBackoff");
    }
}
