// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.PolledWindowConfig;
import dev.mallard.flow.config.PipelineConfig.SinkConfig;
import dev.mallard.flow.sink.ConsoleSink;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.sink.SqlCommandSink;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** SQLFlow's tumbling window (collect, publish, delete on a poll) over a real DuckDB. */
class PolledWindowTest {
    private static final long SECOND = 1_000_000_000L;

    private Engine engine;
    private final ByteArrayOutputStream published = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws Exception {
        engine = Engine.inMemory();
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE counts (minute INT, n INT)");
            statement.execute("INSERT INTO counts VALUES (1, 10), (2, 20), (3, 30)");
        }
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    private PolledWindow window(String collect, String delete, Sink sink) {
        return new PolledWindow(new PolledWindowConfig("counts", "tables.sql[0].manager", collect, delete, 10,
                new SinkConfig("console", JsonNodeFactory.instance.objectNode(), JsonNodeFactory.instance.objectNode())), engine, sink);
    }

    private List<Integer> minutesLeft() throws Exception {
        try (Statement statement = engine.connection().createStatement(); ResultSet rows = statement.executeQuery("SELECT minute FROM counts ORDER BY 1")) {
            java.util.ArrayList<Integer> minutes = new java.util.ArrayList<>();
            while (rows.next()) {
                minutes.add(rows.getInt(1));
            }
            return minutes;
        }
    }

    @Test
    void aPollPublishesWhatTheCollectQuerySelectsAndThenRunsTheDeleteQuery() throws Exception {
        try (PolledWindow window = window("SELECT minute, n FROM counts WHERE minute < 3 ORDER BY minute;\n", "DELETE FROM counts WHERE minute < 3;",
                new ConsoleSink(published, engine.allocator()))) {
            WindowHandOver.Closed closed = window.poll(0);
            assertThat(closed.rows()).isEqualTo(2);
            assertThat(published.toString(StandardCharsets.UTF_8).lines().toList())
                    .containsExactly("{\"minute\":1,\"n\":10}", "{\"minute\":2,\"n\":20}");
            assertThat(minutesLeft()).containsExactly(3);
        }
    }

    @Test
    void nowIsOneInstantInTheCollectAndTheDeleteQuery() throws Exception {
        // The sink keeps the now() the collect query saw; the delete only deletes when its own now() is that one.
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE seen (seen_at TIMESTAMPTZ)");
        }
        try (PolledWindow window = window("SELECT now() AS seen_at FROM counts WHERE minute = 1",
                "DELETE FROM counts WHERE minute = 1 AND now() = (SELECT max(seen_at) FROM seen)",
                new SqlCommandSink("INSERT INTO seen SELECT seen_at FROM sqlflow_sink_batch", List.of()))) {
            window.poll(0);
        }
        assertThat(minutesLeft()).containsExactly(2, 3);
    }

    @Test
    void aSinkThatFailsLeavesEveryRowInTheTableAndNamesTheBlock() throws Exception {
        try (PolledWindow window = window("SELECT * FROM counts", "DELETE FROM counts",
                new SqlCommandSink("SELECT error('the sink is down')", List.of()))) {
            assertThatThrownBy(() -> window.poll(0)).isInstanceOf(MallardException.class).hasMessageContaining("the sink is down");
        }
        assertThat(minutesLeft()).containsExactly(1, 2, 3);
    }

    @Test
    void aCollectQueryThatFailsIsAHandlerSqlErrorNamingTheBlock() {
        try (PolledWindow window = window("SELECT nope FROM counts", "DELETE FROM counts", new ConsoleSink(published, engine.allocator()))) {
            assertThatThrownBy(() -> window.poll(0)).isInstanceOfSatisfying(MallardException.class, e -> {
                assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_SQL_FAILED);
                assertThat(e.getMessage()).startsWith("tables.sql[0].manager: ");
            });
        }
    }

    @Test
    void theFirstPollIsDueAtOnceAndTheNextOnlyOnceTheIntervalPassed() throws Exception {
        try (PolledWindow window = window("SELECT * FROM counts WHERE minute = 1", "DELETE FROM counts WHERE minute = 1",
                new ConsoleSink(published, engine.allocator()))) {
            assertThat(window.pollIfDue(5 * SECOND).rows()).isEqualTo(1);
            assertThat(window.nextPollNanos()).isEqualTo(15 * SECOND);
            try (Statement statement = engine.connection().createStatement()) {
                statement.execute("INSERT INTO counts VALUES (1, 11)");
            }
            assertThat(window.pollIfDue(14 * SECOND)).isEqualTo(WindowHandOver.Closed.NOTHING);
            assertThat(window.pollIfDue(15 * SECOND).rows()).isEqualTo(1);
        }
    }
}
