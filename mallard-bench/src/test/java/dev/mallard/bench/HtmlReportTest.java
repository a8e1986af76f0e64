// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class HtmlReportTest {
    @TempDir
    Path root;

    @Test
    void theHandlersBenchmarkWithHtmlWritesAWellFormedPageWithItsFiguresAndCharts() throws Exception {
        Path page = root.resolve("reports").resolve("handlers.html");
        StringWriter printed = new StringWriter();
        int exit = BenchMain.execute(new String[] {"handlers", "--messages", "5000", "--batch-size", "1000", "--skip-invoke", "--html",
                page.toString()}, new PrintWriter(printed, true));
        assertThat(exit).as(printed.toString()).isZero();
        assertThat(printed.toString()).contains("\"structured_msgs_per_s\"", "wrote " + page);
        Document document = wellFormed(page);
        assertThat(document.getElementsByTagName("title").item(0).getTextContent()).isEqualTo("mallard bench handlers");
        assertThat(document.getElementsByTagName("svg").getLength()).isPositive();
        assertThat(document.getElementsByTagName("rect").getLength()).isGreaterThanOrEqualTo(2);
        assertThat(Files.readString(page)).contains("structured_msgs_per_s", "inferred_msgs_per_s").doesNotContain("<script", "src=", "href=");
    }

    @Test
    void oneObjectPerLineBecomesATableOfRecordsWithAChartPerNumericColumn() throws Exception {
        String output = "loading...\n"
                + "{\"view\":\"by_city\",\"workload\":\"insert\",\"rows\":1000,\"p50_ms\":1.5,\"note\":\"a < b & c\"}\n"
                + "{\"view\":\"by_city\",\"workload\":\"update\",\"rows\":1000,\"p50_ms\":2.5,\"note\":\"\"}\n";
        Path page = root.resolve("views.html");
        new HtmlReport("views", "./mallard bench views --html views.html", HtmlReport.parse(output)).write(page);
        Document document = wellFormed(page);
        // Two records: a header row and two rows; one chart, for p50_ms (rows is the same for both).
        assertThat(document.getElementsByTagName("tr").getLength()).isEqualTo(3);
        assertThat(document.getElementsByTagName("svg").getLength()).isEqualTo(1);
        assertThat(Files.readString(page)).contains("by_city · insert", "a &lt; b &amp; c");
    }

    @Test
    void nestedFiguresAreChartedByTheirGroupAndUnit() {
        assertThat(HtmlReport.unit("structured_msgs_per_s")).isEqualTo("msgs/s");
        assertThat(HtmlReport.unit("small_query.p99_ms")).isEqualTo("small_query");
        assertThat(HtmlReport.unit("ratios.structured_vs_bare")).isEqualTo("ratios");
        assertThat(HtmlReport.unit("peak_rss_mib")).isEqualTo("mib");
        assertThat(HtmlReport.flatten(HtmlReport.parse("{\"a\":{\"b\":1},\"c\":[2,3]}").get(0))).containsOnlyKeys("a.b", "c[0]", "c[1]");
    }

    private static Document wellFormed(Path page) throws Exception {
        assertThat(page).isNotEmptyFile();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return factory.newDocumentBuilder().parse(page.toFile());
    }
}
