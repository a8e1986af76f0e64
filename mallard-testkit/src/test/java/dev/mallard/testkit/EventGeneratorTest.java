// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventGeneratorTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<JsonNode> events(EventGenerator generator, int count) throws Exception {
        List<JsonNode> events = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            events.add(JSON.readTree(generator.next()));
        }
        return events;
    }

    @Test
    void everyEventHasTheShapeOfSqlflowsUserActionFixture() throws Exception {
        for (JsonNode event : events(EventGenerator.fixture(EventGenerator.USER_ACTION, 7), 200)) {
            assertThat(fieldNames(event)).containsExactly("ip", "event", "properties", "timestamp", "type", "userId");
            assertThat(fieldNames(event.path("properties"))).containsExactly("city", "country");
            assertThat(event.path("ip").asText()).matches("(\\d{1,3}\\.){3}\\d{1,3}");
            assertThat(Arrays.stream(event.path("ip").asText().split("\\.")).mapToInt(Integer::parseInt)).allMatch(octet -> octet <= 255);
            assertThat(event.path("event").asText()).isIn(EventGenerator.EVENTS);
            assertThat(event.path("type").asText()).isIn(EventGenerator.TYPES);
            assertThat(event.path("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
            assertThat(UUID.fromString(event.path("userId").asText()).version()).isEqualTo(4);
            assertThat(event.path("properties").path("country").asText()).isEqualTo("US");
        }
    }

    @Test
    void theDefaultCitiesAreHalfNewYorkAndHalfBaltimoreInTurn() throws Exception {
        List<JsonNode> events = events(EventGenerator.userActions(1), 1001);
        assertThat(events.get(0).path("properties").path("city").asText()).isEqualTo("New York");
        assertThat(events.get(1).path("properties").path("city").asText()).isEqualTo("Baltimore");
        assertThat(cityCounts(events)).containsExactlyInAnyOrderEntriesOf(Map.of("New York", 501, "Baltimore", 500));
    }

    @Test
    void givenCitiesCycleSoTheFirstOnesGetTheRemainder() throws Exception {
        List<EventGenerator.City> cities = List.of(new EventGenerator.City("Lyon", "FR"),
                new EventGenerator.City("Osaka", "JP"), new EventGenerator.City("Quito", "EC"));
        List<JsonNode> events = events(EventGenerator.userActions(3, cities), 10);
        assertThat(cityCounts(events)).containsExactlyInAnyOrderEntriesOf(Map.of("Lyon", 4, "Osaka", 3, "Quito", 3));
        assertThat(events.get(1).path("properties").path("country").asText()).isEqualTo("JP");
    }

    @Test
    void theSameSeedGivesTheSameBytesAndAnotherSeedOtherBytes() {
        EventGenerator first = EventGenerator.userActions(99);
        EventGenerator second = EventGenerator.userActions(99);
        EventGenerator other = EventGenerator.userActions(100);
        for (int i = 0; i < 100; i++) {
            byte[] event = first.next();
            assertThat(second.next()).isEqualTo(event);
            assertThat(other.next()).isNotEqualTo(event);
        }
    }

    @Test
    void timestampsStartAtTheStartAndNeverDecrease() throws Exception {
        Instant start = Instant.parse("2030-06-01T12:00:00Z");
        Instant previous = start;
        for (JsonNode event : events(EventGenerator.userActions(5, EventGenerator.DEFAULT_CITIES, start), 500)) {
            Instant timestamp = Instant.parse(event.path("timestamp").asText());
            assertThat(timestamp).isAfterOrEqualTo(previous).isBefore(previous.plusSeconds(1));
            previous = timestamp;
        }
    }

    @Test
    void anUnknownFixtureIsAUserFaultNamingTheKnownOnes() {
        assertThatThrownBy(() -> EventGenerator.fixture("page_view", 1))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_ARGUMENT_INVALID))
                .hasMessageContaining("page_view").hasMessageContaining("user_action");
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static Map<String, Integer> cityCounts(List<JsonNode> events) {
        Map<String, Integer> counts = new TreeMap<>();
        events.forEach(event -> counts.merge(event.path("properties").path("city").asText(), 1, Integer::sum));
        return counts;
    }
}
