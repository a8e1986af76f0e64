// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The remote address of each Flight call, for the failed-login count and log. A Flight call header authenticator is not
 * told the peer, and Flight's middleware interceptor is the outermost one, so no interceptor of ours runs before it. A
 * stream tracer does: gRPC asks it for the call's context before any interceptor, and tells it the call's transport
 * attributes when the call starts, before the interceptors run, on the same thread. The address is put in that
 * context, where the authenticator reads it.
 */
final class PeerAddress extends ServerStreamTracer.Factory {
    private static final Context.Key<AtomicReference<String>> REMOTE = Context.key("mallard-flight-remote-address");
    /** What a call whose transport gave no address is counted under. */
    static final String UNKNOWN = "unknown";

    /** The calling client's address (its IP, without the port), as failed logins are counted and logged. */
    static String current() {
        AtomicReference<String> remote = REMOTE.get();
        String address = remote == null ? null : remote.get();
        return address == null ? UNKNOWN : address;
    }

    static String host(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
        }
        return address == null ? UNKNOWN : address.toString();
    }

    @Override
    public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
        AtomicReference<String> remote = new AtomicReference<>();
        return new ServerStreamTracer() {
            @Override
            public Context filterContext(Context context) {
                return context.withValue(REMOTE, remote);
            }

            @Override
            public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
                remote.set(host(callInfo.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)));
            }
        };
    }
}
