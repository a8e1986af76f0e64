// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.http.HeaderNames;
import io.helidon.http.ServerRequestHeaders;
import io.helidon.http.WritableHeaders;
import org.junit.jupiter.api.Test;

class ResultFormatTest {
    private static ResultFormat negotiated(String... accept) {
        WritableHeaders<?> headers = WritableHeaders.create();
        for (String value : accept) {
            headers.add(HeaderNames.ACCEPT, value);
        }
        return ResultFormat.negotiate(ServerRequestHeaders.create(headers));
    }

    @Test
    void anythingThatNamesNeitherTsvNorJsonLinesIsAnsweredInArrowAsDazzleDuckDoes() {
        assertThat(negotiated()).isEqualTo(ResultFormat.ARROW);
        assertThat(negotiated("*/*")).isEqualTo(ResultFormat.ARROW);
        assertThat(negotiated("application/json")).isEqualTo(ResultFormat.ARROW);
        assertThat(negotiated("text/csv")).isEqualTo(ResultFormat.ARROW);
        assertThat(negotiated("application/vnd.apache.arrow.stream")).isEqualTo(ResultFormat.ARROW);
    }

    @Test
    void eachSpellingOfTsvAndJsonLinesIsUnderstood() {
        assertThat(negotiated("text/tab-separated-values")).isEqualTo(ResultFormat.TSV);
        assertThat(negotiated("text/tsv; charset=utf-8")).isEqualTo(ResultFormat.TSV);
        assertThat(negotiated("application/jsonl")).isEqualTo(ResultFormat.JSONL);
        assertThat(negotiated("application/x-ndjson")).isEqualTo(ResultFormat.JSONL);
    }

    @Test
    void qualityFactorsDecideAndTheHeadersOrderBreaksTies() {
        assertThat(negotiated("text/tsv;q=0.5, application/jsonl")).isEqualTo(ResultFormat.JSONL);
        assertThat(negotiated("application/jsonl;q=0.2, text/tsv;q=0.9")).isEqualTo(ResultFormat.TSV);
        assertThat(negotiated("text/tsv, application/jsonl")).isEqualTo(ResultFormat.TSV);
        assertThat(negotiated("application/jsonl, text/tsv")).isEqualTo(ResultFormat.JSONL);
        assertThat(negotiated("application/jsonl;q=0.1, application/vnd.apache.arrow.stream")).isEqualTo(ResultFormat.ARROW);
    }

    @Test
    void aTypeWithQualityZeroIsRefusedNotChosen() {
        assertThat(negotiated("text/tsv;q=0")).isEqualTo(ResultFormat.ARROW);
        assertThat(negotiated("text/tsv;q=0, application/jsonl;q=0.3")).isEqualTo(ResultFormat.JSONL);
    }

    @Test
    void aWildcardBelowANamedTypeLeavesTheNamedTypeFirst() {
        assertThat(negotiated("text/tsv, */*;q=0.1")).isEqualTo(ResultFormat.TSV);
        assertThat(negotiated("text/*")).isEqualTo(ResultFormat.TSV);
    }
}
