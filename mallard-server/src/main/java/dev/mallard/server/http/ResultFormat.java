// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HttpMediaType;
import io.helidon.http.ServerRequestHeaders;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The result encodings of {@code /v1/query} and {@code /v1/named-query}, chosen by the Accept header. */
public enum ResultFormat {
    ARROW("application/vnd.apache.arrow.stream"),
    TSV("text/tab-separated-values; charset=utf-8"),
    JSONL("application/jsonl; charset=utf-8");

    /** Every media type a client may ask for, each with the format it gets; Arrow's first, so {@code *}{@code /*} means Arrow. */
    private static final List<MediaType> OFFERED = List.of(MediaTypes.create("application/vnd.apache.arrow.stream"),
            MediaTypes.create("application/vnd.apache.arrow"), MediaTypes.create("text/tab-separated-values"), MediaTypes.create("text/tsv"),
            MediaTypes.create("application/jsonl"), MediaTypes.create("application/x-ndjson"), MediaTypes.create("application/x-jsonlines"));
    private static final List<ResultFormat> FORMAT_OF_OFFERED = List.of(ARROW, ARROW, TSV, TSV, JSONL, JSONL, JSONL);

    private final String contentType;

    ResultFormat(String contentType) {
        this.contentType = contentType;
    }

    public String contentType() {
        return contentType;
    }

    /**
     * The format the Accept header prefers, by Helidon's reading of it (quality factors honoured, {@code q=0} refusing a
     * type, the order of the header breaking ties); Arrow when it names none of TSV, JSON lines or Arrow (no header,
     * {@code application/json}, {@code text/csv}...), as DazzleDuck answers.
     */
    public static ResultFormat negotiate(ServerRequestHeaders headers) {
        List<HttpMediaType> ranges = new ArrayList<>(headers.acceptedTypes());
        // Stable: among ranges of one quality, the header's order decides.
        ranges.sort(Comparator.comparingDouble(HttpMediaType::qualityFactor).reversed());
        for (HttpMediaType range : ranges) {
            if (range.qualityFactor() <= 0) {
                break;
            }
            for (int i = 0; i < OFFERED.size(); i++) {
                if (range.test(OFFERED.get(i))) {
                    return FORMAT_OF_OFFERED.get(i);
                }
            }
        }
        return ARROW;
    }
}
