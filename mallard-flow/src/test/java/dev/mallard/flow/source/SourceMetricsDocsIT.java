// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.source.webhook.WebhookSettings;
import dev.mallard.flow.source.webhook.WebhookSource;
import dev.mallard.flow.source.websocket.WebSocketSource;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/sources.md and the webhook and WebSocket sources name the same series; the doc cannot drift. */
class SourceMetricsDocsIT {
    private static final Pattern SERIES_ROW = Pattern.compile("^\\|\\s*`([a-z_]+)`\\s*\\|", Pattern.MULTILINE);
    private static final Pattern FAMILY = Pattern.compile("^# TYPE ([a-z_]+) ", Pattern.MULTILINE);

    @Test
    void everySeriesTheSourcesExportIsDocumentedAndNoOther() throws Exception {
        MetricsRegistry registry = new MetricsRegistry();
        try (WebhookSource webhook = new WebhookSource(new WebhookSettings("127.0.0.1", 0, Optional.empty(), 1024, 4,
                        WebhookSettings.Ack.ON_RECEIVE), 0, 10);
                WebSocketSource websocket = new WebSocketSource(URI.create("ws://127.0.0.1:1/none"), 0, 10)) {
            webhook.registerMeters(registry, "p");
            websocket.registerMeters(registry, "p");
            // The request counter has a series per status code, so it appears with the first request.
            try (java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient()) {
                client.send(java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + webhook.port() + "/events"))
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build(),
                        java.net.http.HttpResponse.BodyHandlers.discarding());
            }
            // The server counts a request after its answer has gone out, so the client can read the answer first.
            dev.mallard.testkit.Await.until("webhook_requests_total in the scrape", () -> registry.scrape().contains("# TYPE webhook_requests_total "));
            Set<String> exported = new TreeSet<>();
            Matcher families = FAMILY.matcher(registry.scrape());
            while (families.find()) {
                String family = families.group(1);
                if (!family.endsWith("_max")) {
                    exported.add(family.endsWith("_seconds") ? family + " (histogram)" : family);
                }
            }
            Set<String> documented = new TreeSet<>();
            String doc = Files.readString(Path.of("..", "docs", "sources.md"));
            Matcher rows = SERIES_ROW.matcher(doc.substring(doc.indexOf("## Source metrics")));
            while (rows.find()) {
                String name = rows.group(1);
                documented.add(name.endsWith("_seconds") ? name + " (histogram)" : name);
            }
            assertThat(documented).hasSize(4).isEqualTo(exported);
        }
    }
}
