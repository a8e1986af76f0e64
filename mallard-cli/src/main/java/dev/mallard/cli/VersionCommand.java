// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "version", description = "Print Mallard's version and the DuckDB it embeds.")
final class VersionCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        for (String line : new Provider().getVersion()) {
            spec.commandLine().getOut().println(line);
        }
        spec.commandLine().getOut().flush();
        return 0;
    }

    static final class Provider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = MallardCommand.class.getPackage().getImplementationVersion();
            return new String[] {
                "mallard " + (version == null ? "development build" : version),
                "duckdb " + duckDbVersion(),
                "java " + System.getProperty("java.version")
            };
        }

        private static String duckDbVersion() {
            try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
                    ResultSet rows = connection.createStatement().executeQuery("SELECT version()")) {
                rows.next();
                return rows.getString(1);
            } catch (SQLException e) {
                return "unavailable (" + e.getMessage() + ")";
            }
        }
    }
}
