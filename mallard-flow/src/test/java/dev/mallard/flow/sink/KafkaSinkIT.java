// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The Kafka sink when no broker answers: a port on this machine with nothing listening. */
class KafkaSinkIT {
    private static int portWithNothingListening() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void aBrokerThatIsDownFailsTheWholeFlushWithinTheDeadlineNotOnceForEveryRow() throws Exception {
        ObjectMapper json = new ObjectMapper();
        int port = portWithNothingListening();
        try (Engine engine = Engine.inMemory()) {
            try (Statement statement = engine.connection().createStatement()) {
                statement.execute("CREATE TEMP TABLE result AS SELECT range AS n FROM range(100)");
            }
            ResultTable batch = new ResultTable(engine.connection(), "result", 100);
            var retry = json.readTree("{\"deadline_seconds\": 1}");
            // Per row, the old sink waited the whole deadline for the broker's metadata: 100 s for these 100 rows.
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                try (Sink sink = new RetryingSink(new KafkaSink(json.readTree("{\"brokers\":[\"127.0.0.1:" + port + "\"],\"topic\":\"out\"}"),
                        retry, engine.allocator()), RetryingSink.Ladder.of(retry), () -> {})) {
                    sink.write(batch);
                    assertThatThrownBy(sink::flush)
                            .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_UNREACHABLE))
                            .hasMessageContaining("127.0.0.1:" + port);
                }
            });
        }
    }
}
