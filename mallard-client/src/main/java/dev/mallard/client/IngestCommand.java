// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Flight SQL's {@code CommandStatementIngest} packed in a {@code google.protobuf.Any}, as the DoPut descriptor's
 * command, written by hand so the client needs flight-core only (not flight-sql). Field numbers are FlightSql.proto's:
 * {@code table_definition_options = 1}, {@code table = 2}, {@code options = 1000} (a map of strings).
 */
final class IngestCommand {
    static final String TYPE_URL = "type.googleapis.com/arrow.flight.protocol.sql.CommandStatementIngest";

    private IngestCommand() {}

    static byte[] encode(Map<String, String> options) {
        ByteArrayOutputStream command = new ByteArrayOutputStream();
        // table_definition_options {if_not_exist: CREATE (1), if_exists: APPEND (2)}
        bytesField(command, 1, new byte[] {0x08, 0x01, 0x10, 0x02});
        bytesField(command, 2, new byte[0]);
        options.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            ByteArrayOutputStream entry = new ByteArrayOutputStream();
            bytesField(entry, 1, e.getKey().getBytes(StandardCharsets.UTF_8));
            bytesField(entry, 2, e.getValue().getBytes(StandardCharsets.UTF_8));
            bytesField(command, 1000, entry.toByteArray());
        });
        ByteArrayOutputStream any = new ByteArrayOutputStream();
        bytesField(any, 1, TYPE_URL.getBytes(StandardCharsets.UTF_8));
        bytesField(any, 2, command.toByteArray());
        return any.toByteArray();
    }

    private static void bytesField(ByteArrayOutputStream out, int field, byte[] value) {
        varint(out, ((long) field << 3) | 2);
        varint(out, value.length);
        out.writeBytes(value);
    }

    private static void varint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }
}
