// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * The child process of {@link CrashRecoveryTest}: writes a database through {@code jdbc:mallard:} with auto-sync off,
 * so its captured changes stay unsynced, and prints a line after each commit until it is killed.
 */
public final class CrashWriter {
    private CrashWriter() {}

    public static void main(String[] args) throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:" + args[0]);
                Statement statement = connection.createStatement()) {
            statement.execute("SELECT dbsp_auto_sync(false)");
            for (int i = 0; ; i++) {
                statement.executeUpdate("INSERT INTO t VALUES (" + i % 5 + ", " + i + ")");
                if (i % 7 == 3) {
                    statement.executeUpdate("DELETE FROM t WHERE v = " + (i - 2));
                }
                System.out.println("committed " + i);
                System.out.flush();
            }
        }
    }
}
