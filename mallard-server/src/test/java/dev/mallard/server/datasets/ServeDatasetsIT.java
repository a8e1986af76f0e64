// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The example serve configuration of docs/datasets.md, run by {@code mallard serve}'s server and called over real HTTP. */
class ServeDatasetsIT {
    static final Path EXAMPLE = Path.of("..", "examples", "serve", "events.yml");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static DatasetServer server;

    @BeforeAll
    static void start() {
        ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of("PORT", "0"))).read(EXAMPLE);
        server = DatasetServer.start(config, Path.of("."));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    record Answer(int status, JsonNode body) {}

    static Answer get(int port, String pathAndQuery) throws Exception {
        HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), JSON.readTree(response.body()));
    }

    private static Answer get(String pathAndQuery) throws Exception {
        return get(server.port(), pathAndQuery);
    }

    @Test
    void theListNamesEveryDatasetWithItsParamsGrainsRangeAndCache() throws Exception {
        Answer list = get("/v1/datasets");
        assertThat(list.status()).isEqualTo(200);
        List<String> names = new ArrayList<>();
        list.body().path("datasets").forEach(dataset -> names.add(dataset.path("name").asText()));
        assertThat(names).containsExactly("city_totals", "city_events", "events_over_time");
        JsonNode ranged = list.body().path("datasets").get(2);
        assertThat(ranged.path("grains").findValuesAsText("name")).containsExactly("5m", "1h", "1d");
        assertThat(ranged.path("range").path("default_seconds").asLong()).isEqualTo(86_400);
        assertThat(ranged.path("cache").path("ttl_seconds").asLong()).isEqualTo(300);
        assertThat(list.body().path("datasets").get(1).path("params").get(1).path("max").asLong()).isEqualTo(100);
    }

    @Test
    void aPlainDatasetAnswersItsRowsWithoutGrainOrRange() throws Exception {
        Answer answer = get("/v1/datasets/city_totals?city=Baltimore");
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.body().path("dataset").asText()).isEqualTo("city_totals");
        assertThat(answer.body().path("grain").isNull()).isTrue();
        assertThat(answer.body().path("range").isNull()).isTrue();
        assertThat(answer.body().path("row_count").asLong()).isEqualTo(1);
        assertThat(answer.body().path("rows").get(0).path("events").asLong()).isEqualTo(20_160);
        assertThat(answer.body().path("rows").get(0).path("n").asLong()).isEqualTo(20_160 / 5 * 15);
        assertThat(answer.body().has("cache")).as("an uncached dataset says nothing of the cache").isFalse();
        assertThat(get("/v1/datasets/city_totals").body().path("row_count").asLong()).as("a param left out binds NULL").isEqualTo(2);
    }

    @Test
    void theCallerPicksTheGrainOfADatasetWithoutRange() throws Exception {
        Answer daily = get("/v1/datasets/city_events?grain=1d&city=Baltimore");
        assertThat(daily.status()).isEqualTo(200);
        assertThat(daily.body().path("grain").asText()).isEqualTo("1d");
        assertThat(daily.body().path("row_count").asLong()).as("the default limit").isEqualTo(10);
        assertThat(daily.body().path("rows").get(0).path("n").asLong()).isEqualTo(4_320);
        Answer hourly = get("/v1/datasets/city_events?grain=1h&city=Lisbon&limit=3");
        assertThat(hourly.body().path("rows").size()).isEqualTo(3);
        assertThat(hourly.body().path("rows").get(0).path("bucket").asText()).isEqualTo("2026-01-01T00:00");
        assertThat(hourly.body().path("rows").get(0).path("n").asLong()).isEqualTo(180);
    }

    @Test
    void theWindowsWidthPicksTheFinestGrainThatServesIt() throws Exception {
        Answer sixHours = get("/v1/datasets/events_over_time?since=2026-01-02T00:00:00Z&until=2026-01-02T06:00:00Z&city=Baltimore");
        assertThat(sixHours.status()).isEqualTo(200);
        assertThat(sixHours.body().path("grain").asText()).isEqualTo("5m");
        assertThat(sixHours.body().path("row_count").asLong()).isEqualTo(72);
        assertThat(sixHours.body().path("rows").get(0).path("n").asLong()).isEqualTo(15);
        Answer week = get("/v1/datasets/events_over_time?since=2026-01-01T00:00:00Z&until=2026-01-08T00:00:00Z");
        assertThat(week.body().path("grain").asText()).isEqualTo("1h");
        assertThat(week.body().path("row_count").asLong()).isEqualTo(7 * 24);
        assertThat(week.body().path("rows").get(0).path("n").asLong()).as("both cities").isEqualTo(360);
        Answer month = get("/v1/datasets/events_over_time?since=2026-01-01T00:00:00Z&until=2026-02-01T00:00:00Z");
        assertThat(month.body().path("grain").asText()).isEqualTo("1d");
        assertThat(month.body().path("row_count").asLong()).isEqualTo(14);
        Answer exactlyOneDay = get("/v1/datasets/events_over_time?since=2026-01-03T00:00:00Z&until=2026-01-04T00:00:00Z");
        assertThat(exactlyOneDay.body().path("grain").asText()).as("max_range is inclusive").isEqualTo("5m");
    }

    @Test
    void theWindowIsRoundedUpToTheGrainsBucketAndEchoedAsRange() throws Exception {
        Answer answer = get("/v1/datasets/events_over_time?since=2026-01-02T00:01:30Z&until=2026-01-02T00:58:00Z");
        assertThat(answer.body().path("range").path("since").asText()).isEqualTo("2026-01-02T00:05:00Z");
        assertThat(answer.body().path("range").path("until").asText()).isEqualTo("2026-01-02T01:00:00Z");
        assertThat(answer.body().path("row_count").asLong()).isEqualTo(11);
    }

    @Test
    void withoutSinceTheWindowIsTheRangesDefaultEndingNow() throws Exception {
        Answer answer = get("/v1/datasets/events_over_time");
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.body().path("grain").asText()).isEqualTo("5m");
        java.time.Instant since = java.time.Instant.parse(answer.body().path("range").path("since").asText());
        java.time.Instant until = java.time.Instant.parse(answer.body().path("range").path("until").asText());
        assertThat(java.time.Duration.between(since, until)).isEqualTo(java.time.Duration.ofHours(24));
        assertThat(until.getEpochSecond() % 300).isZero();
    }

    @Test
    void aNamedGrainServesNoWiderThanItsMaxRange() throws Exception {
        Answer tooWide = get("/v1/datasets/events_over_time?grain=5m&since=2026-01-01T00:00:00Z&until=2026-01-03T00:00:00Z");
        assertThat(tooWide.status()).isEqualTo(400);
        assertThat(tooWide.body().path("error").path("code").asText()).isEqualTo("range_too_wide");
        Answer coarse = get("/v1/datasets/events_over_time?grain=1d&since=2026-01-01T00:00:00Z&until=2026-01-03T00:00:00Z");
        assertThat(coarse.body().path("grain").asText()).as("a coarser grain than the finest may be asked").isEqualTo("1d");
        assertThat(coarse.body().path("row_count").asLong()).isEqualTo(2);
    }

    @Test
    void aWindowWiderThanEveryGrainIsRangeTooWide() throws Exception {
        Answer answer = get("/v1/datasets/events_over_time?since=2024-01-01T00:00:00Z&until=2026-01-01T00:00:00Z");
        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.body().path("error").path("code").asText()).isEqualTo("range_too_wide");
        assertThat(answer.body().path("error").path("mallard_code").asText()).isEqualTo("user.dataset.range_too_wide");
    }

    @Test
    void paramsOutsideTheirTypeOrBoundsAreInvalidParam() throws Exception {
        for (String query : List.of("/v1/datasets/city_events?grain=1d&city=Baltimore&limit=0", "/v1/datasets/city_events?grain=1d&city=Baltimore&limit=101",
                "/v1/datasets/city_events?grain=1d&city=Baltimore&limit=ten", "/v1/datasets/city_events?grain=1d",
                "/v1/datasets/city_events?grain=1d&city=Baltimore&town=x", "/v1/datasets/events_over_time?since=yesterday",
                "/v1/datasets/city_events?grain=1d&city=a&city=b")) {
            Answer answer = get(query);
            assertThat(answer.status()).as(query).isEqualTo(400);
            assertThat(answer.body().path("error").path("code").asText()).as(query).isEqualTo("invalid_param");
        }
        assertThat(get("/v1/datasets/city_events?grain=1d&city=Baltimore&limit=100").status()).as("max is inclusive").isEqualTo(200);
        assertThat(get("/v1/datasets/city_events?grain=1d&city=Baltimore&limit=1").status()).as("min is inclusive").isEqualTo(200);
    }

    @Test
    void aValueIsBoundNeverSpliced() throws Exception {
        Answer answer = get("/v1/datasets/city_totals?city=" + java.net.URLEncoder.encode("x' OR '1'='1", java.nio.charset.StandardCharsets.UTF_8));
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.body().path("row_count").asLong()).isZero();
    }

    @Test
    void unknownDatasetsGrainsAndBackwardRangesHaveTheirOwnCodes() throws Exception {
        Answer missing = get("/v1/datasets/nope");
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.body().path("error").path("code").asText()).isEqualTo("unknown_dataset");
        assertThat(get("/v1/datasets/city_events?grain=1w&city=Baltimore").body().path("error").path("code").asText()).isEqualTo("unknown_grain");
        assertThat(get("/v1/datasets/city_events?city=Baltimore").body().path("error").path("code").asText()).isEqualTo("unknown_grain");
        assertThat(get("/v1/datasets/city_totals?grain=1d").body().path("error").path("code").asText()).isEqualTo("unknown_grain");
        Answer backward = get("/v1/datasets/events_over_time?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z");
        assertThat(backward.status()).isEqualTo(400);
        assertThat(backward.body().path("error").path("code").asText()).isEqualTo("invalid_range");
    }

    @Test
    void aCachedAnswerIsAMissThenAHitWithItsAge() throws Exception {
        String query = "/v1/datasets/events_over_time?since=2026-01-05T00:00:00Z&until=2026-01-05T12:00:00Z&city=Lisbon";
        Answer first = get(query);
        Answer second = get(query);
        assertThat(first.body().path("cache").asText()).isEqualTo("miss");
        assertThat(second.body().path("cache").asText()).isEqualTo("hit");
        assertThat(second.body().path("age_ms").asLong()).isGreaterThanOrEqualTo(0);
        assertThat(second.body().path("rows")).isEqualTo(first.body().path("rows"));
        Answer sameBucket = get("/v1/datasets/events_over_time?since=2026-01-04T23:56:00Z&until=2026-01-05T11:57:00Z&city=Lisbon");
        assertThat(sameBucket.body().path("cache").asText()).as("a window rounding to the same buckets is the same key").isEqualTo("hit");
        Answer otherCity = get("/v1/datasets/events_over_time?since=2026-01-05T00:00:00Z&until=2026-01-05T12:00:00Z&city=Baltimore");
        assertThat(otherCity.body().path("cache").asText()).as("another bound value is another key").isEqualTo("miss");
    }

    @Test
    void concurrentIdenticalRequestsRunOneQuery() throws Exception {
        String query = "/v1/datasets/events_over_time?since=2026-01-01T00:00:00Z&until=2026-01-14T00:00:00Z";
        int clients = 16;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Callable<Answer>> calls = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                calls.add(() -> get(query));
            }
            List<String> outcomes = new ArrayList<>();
            for (Future<Answer> answer : pool.invokeAll(calls)) {
                assertThat(answer.get().status()).isEqualTo(200);
                assertThat(answer.get().body().path("row_count").asLong()).isEqualTo(13 * 24);
                outcomes.add(answer.get().body().path("cache").asText());
            }
            assertThat(outcomes).filteredOn("miss"::equals).hasSize(1);
            assertThat(outcomes).allMatch(outcome -> List.of("miss", "shared", "hit").contains(outcome));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void metricsCountRequestsAndCacheOutcomesByDataset() throws Exception {
        get("/v1/datasets/city_totals");
        HttpResponse<String> metrics = CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).contains("mallard_serve_requests_total{dataset=\"city_totals\",status=\"200\"}")
                .contains("mallard_serve_query_duration_seconds_count{dataset=\"city_totals\"}")
                .contains("mallard_serve_cache_bytes");
    }
}
