// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DatasetCacheTest {
    private final ExecutorService fills = Executors.newCachedThreadPool();
    private final AtomicLong clock = new AtomicLong(1_000);

    @AfterEach
    void stop() {
        fills.shutdownNow();
    }

    private static DatasetCache.Key key(String value) {
        return new DatasetCache.Key("d", "", "SELECT $1", List.of(value));
    }

    private DatasetCache.Rows rows(int bytes) {
        return new DatasetCache.Rows(new byte[bytes], 1, clock.get());
    }

    @Test
    void callersArrivingWhileTheQueryRunsShareItsAnswer() throws Exception {
        DatasetCache cache = new DatasetCache(1 << 20, fills, clock::get);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger queries = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
            List<Future<DatasetCache.Answer>> answers = new ArrayList<>();
            answers.add(callers.submit(() -> cache.get(key("a"), Duration.ofSeconds(10), () -> {
                queries.incrementAndGet();
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return rows(10);
            })));
            assertThat(started.await(30, TimeUnit.SECONDS)).as("the first query starts").isTrue();
            for (int i = 0; i < 7; i++) {
                answers.add(callers.submit(() -> cache.get(key("a"), Duration.ofSeconds(10), () -> {
                    queries.incrementAndGet();
                    return rows(10);
                })));
            }
            release.countDown();
            List<DatasetCache.Outcome> outcomes = new ArrayList<>();
            for (Future<DatasetCache.Answer> answer : answers) {
                outcomes.add(answer.get(30, TimeUnit.SECONDS).outcome());
            }
            assertThat(queries.get()).isEqualTo(1);
            assertThat(outcomes.getFirst()).isEqualTo(DatasetCache.Outcome.MISS);
            assertThat(outcomes.subList(1, 8)).allMatch(outcome -> outcome != DatasetCache.Outcome.MISS);
            assertThat(cache.get(key("a"), Duration.ofSeconds(10), () -> rows(10)).outcome()).isEqualTo(DatasetCache.Outcome.HIT);
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void anEntryExpiresOneTtlAfterItsQueryStarted() {
        DatasetCache cache = new DatasetCache(1 << 20, fills, clock::get);
        assertThat(cache.get(key("a"), Duration.ofNanos(100), () -> rows(10)).outcome()).isEqualTo(DatasetCache.Outcome.MISS);
        clock.addAndGet(99);
        assertThat(cache.get(key("a"), Duration.ofNanos(100), () -> rows(10)).outcome()).isEqualTo(DatasetCache.Outcome.HIT);
        clock.addAndGet(1);
        assertThat(cache.get(key("a"), Duration.ofNanos(100), () -> rows(10)).outcome()).isEqualTo(DatasetCache.Outcome.MISS);
    }

    @Test
    void aFailureReachesItsCallerAndIsNeverStored() {
        DatasetCache cache = new DatasetCache(1 << 20, fills, clock::get);
        assertThatThrownBy(() -> cache.get(key("a"), Duration.ofSeconds(10), () -> {
            throw new IllegalArgumentException("the query failed");
        })).hasMessage("the query failed");
        assertThat(cache.entries()).isZero();
        assertThat(cache.get(key("a"), Duration.ofSeconds(10), () -> rows(10)).outcome()).isEqualTo(DatasetCache.Outcome.MISS);
    }

    @Test
    void theLeastRecentlyUsedEntryGoesFirstAndExpiredOnesBeforeIt() {
        long entry = rows(872).bytes();
        DatasetCache cache = new DatasetCache(3 * entry, fills, clock::get);
        cache.get(key("old"), Duration.ofNanos(10), () -> rows(872));
        cache.get(key("a"), Duration.ofSeconds(10), () -> rows(872));
        cache.get(key("b"), Duration.ofSeconds(10), () -> rows(872));
        clock.addAndGet(20);
        cache.get(key("a"), Duration.ofSeconds(10), () -> rows(872));
        cache.get(key("c"), Duration.ofSeconds(10), () -> rows(872));
        assertThat(cache.get(key("a"), Duration.ofSeconds(10), () -> rows(872)).outcome()).as("the expired entry went, not a").isEqualTo(DatasetCache.Outcome.HIT);
        cache.get(key("d"), Duration.ofSeconds(10), () -> rows(872));
        assertThat(cache.get(key("b"), Duration.ofSeconds(10), () -> rows(872)).outcome()).as("b was the least recently used").isEqualTo(DatasetCache.Outcome.MISS);
        assertThat(cache.bytes()).isLessThanOrEqualTo(3 * entry);
        assertThat(cache.evictions()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void manyClientsOverManyKeysStayWithinTheBoundAndRunOneQueryPerLiveKey() throws Exception {
        long entry = rows(1000).bytes();
        DatasetCache cache = new DatasetCache(20 * entry, fills, System::nanoTime);
        AtomicInteger queries = new AtomicInteger();
        int clients = 32;
        ExecutorService callers = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Integer>> misses = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                misses.add(callers.submit(() -> {
                    int mine = 0;
                    for (int i = 0; i < 500; i++) {
                        // Half the requests go to five hot keys, half to a wide tail that keeps evicting.
                        String value = i % 2 == 0 ? "hot" + (i % 5) : "tail" + ((client * 500 + i) % 400);
                        DatasetCache.Answer answer = cache.get(key(value), Duration.ofMinutes(5), () -> {
                            queries.incrementAndGet();
                            return new DatasetCache.Rows(new byte[1000], 1, System.nanoTime());
                        });
                        assertThat(answer.rows().json()).hasSize(1000);
                        mine += answer.outcome() == DatasetCache.Outcome.MISS ? 1 : 0;
                    }
                    return mine;
                }));
            }
            int total = 0;
            for (Future<Integer> miss : misses) {
                total += miss.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).as("every query is some caller's miss").isEqualTo(queries.get());
            assertThat(cache.bytes()).isLessThanOrEqualTo(20 * entry);
            assertThat(cache.entries()).isLessThanOrEqualTo(20);
            assertThat(cache.evictions()).isPositive();
        } finally {
            callers.shutdownNow();
        }
    }
}
