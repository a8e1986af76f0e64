// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * A Flight SQL client in a JVM of its own that reads one query's whole result through DoGet each time it is told to,
 * so that during a read the bench's JVM (the server) does only the server's work and its CPU time per row is the
 * server's. The parent writes {@code read} on the child's stdin; the child answers one JSON line: rows, the read's
 * wall time and the CPU time the child's JVM used for it. One login, kept for every read, as a long-lived client.
 */
final class FlightReadClient implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String READ = "read";

    /** One read: rows, wall time, and the CPU time of the client's JVM and of this (the server's) JVM meanwhile. */
    record Read(long rows, long nanos, long clientCpuNanos, long serverCpuNanos) {
        double rowsPerSecond() {
            return rows / (nanos / 1e9);
        }
    }

    private final Process child;
    private final Writer commands;
    private final BufferedReader answers;

    private FlightReadClient(Process child) {
        this.child = child;
        this.commands = new java.io.OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
        this.answers = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    }

    static FlightReadClient start(String host, int port, String user, String password, String query) throws IOException {
        List<String> command = SmallQueryClients.childJava(FlightReadClient.class);
        command.addAll(List.of(host, String.valueOf(port), user, password, query));
        return new FlightReadClient(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
    }

    /** Reads the query once in the child and waits for its answer. */
    Read read() throws IOException {
        long serverStart = ProcessCpu.selfNanos();
        commands.write(READ + "\n");
        commands.flush();
        String line = answers.readLine();
        long server = ProcessCpu.between(serverStart, ProcessCpu.selfNanos());
        if (line == null || !line.startsWith("{")) {
            throw new IllegalStateException("the Flight read client answered " + line + " instead of a report; see its stderr above");
        }
        JsonNode report = JSON.readTree(line);
        return new Read(report.get("rows").asLong(), report.get("nanos").asLong(), report.get("cpu_ns").asLong(), server);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        commands.close();
        if (!child.waitFor(30, TimeUnit.SECONDS)) {
            child.destroyForcibly();
        }
    }

    public static void main(String[] args) {
        PrintStream out = System.out;
        int exit = 0;
        try (BufferAllocator allocator = new RootAllocator();
                FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure(args[0], Integer.parseInt(args[1]))).build()) {
            CredentialCallOption bearer = client.authenticateBasicToken(args[2], args[3]).orElseThrow();
            FlightSqlClient sql = new FlightSqlClient(client);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null && line.equals(READ); ) {
                long cpuStart = ProcessCpu.selfNanos();
                long start = System.nanoTime();
                FlightInfo info = sql.execute(args[4], bearer);
                long rows = 0;
                try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                    while (stream.next()) {
                        rows += stream.getRoot().getRowCount();
                    }
                }
                long nanos = System.nanoTime() - start;
                out.println(JSON.createObjectNode().put("rows", rows).put("nanos", nanos)
                        .put("cpu_ns", ProcessCpu.between(cpuStart, ProcessCpu.selfNanos())));
                out.flush();
            }
        } catch (Exception e) {
            e.printStackTrace();
            exit = 1;
        }
        // The Flight client leaves non-daemon threads behind.
        System.exit(exit);
    }
}
