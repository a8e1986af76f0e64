// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import java.util.Optional;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightServerMiddleware;
import org.apache.arrow.flight.RequestContext;

/** Keeps a Flight call's request headers, so a handler can read its {@code x-dd-*} options. */
final class CallHeadersMiddleware implements FlightServerMiddleware {
    static final Key<CallHeadersMiddleware> KEY = Key.of("mallard.call-headers");

    private final CallHeaders headers;

    private CallHeadersMiddleware(CallHeaders headers) {
        this.headers = headers;
    }

    Optional<String> get(String name) {
        return Optional.ofNullable(headers.get(name));
    }

    @Override
    public void onBeforeSendingHeaders(CallHeaders outgoingHeaders) {}

    @Override
    public void onCallCompleted(CallStatus status) {}

    @Override
    public void onCallErrored(Throwable err) {}

    static final class Factory implements FlightServerMiddleware.Factory<CallHeadersMiddleware> {
        @Override
        public CallHeadersMiddleware onCallStarted(CallInfo info, CallHeaders incomingHeaders, RequestContext context) {
            return new CallHeadersMiddleware(incomingHeaders);
        }
    }
}
