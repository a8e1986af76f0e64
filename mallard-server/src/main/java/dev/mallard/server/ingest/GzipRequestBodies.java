// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import io.helidon.http.encoding.ContentDecoder;
import io.helidon.http.encoding.ContentEncoder;
import io.helidon.http.encoding.ContentEncoding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * {@code Content-Encoding: gzip} on a request body, decoded as it is read. Decoding only: responses keep the
 * encoding their handlers choose, so a listener with this encoding compresses nothing on its own.
 */
final class GzipRequestBodies implements ContentEncoding {
    @Override
    public Set<String> ids() {
        return Set.of("gzip", "x-gzip");
    }

    @Override
    public boolean supportsEncoding() {
        return false;
    }

    @Override
    public boolean supportsDecoding() {
        return true;
    }

    @Override
    public ContentDecoder decoder() {
        return in -> {
            try {
                return new GZIPInputStream(in, 1 << 16);
            } catch (IOException e) {
                throw new UncheckedIOException("the request body is not gzip: " + e.getMessage(), e);
            }
        };
    }

    @Override
    public ContentEncoder encoder() {
        return ContentEncoder.NO_OP;
    }

    @Override
    public String name() {
        return "gzip";
    }

    @Override
    public String type() {
        return "gzip";
    }
}
