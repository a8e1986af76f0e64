// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;

/** Finds a command word that names no command, and the command it was probably meant to be. */
final class CommandNames {
    private static final int MAX_TYPO_DISTANCE = 2;

    private CommandNames() {}

    /**
     * The message for the first word of {@code args} that should name a subcommand and names none; empty when
     * every command word is known. Words after the first option are the command's own arguments. {@code help}
     * is looked through: {@code mallard help rollup} is as unknown as {@code mallard rollup}.
     */
    static Optional<String> unknownCommand(CommandLine root, String... args) {
        CommandLine current = root;
        for (String arg : args) {
            if (arg.startsWith("-")) {
                return Optional.empty();
            }
            Map<String, CommandLine> subcommands = current.getSubcommands();
            CommandLine next = subcommands.get(arg);
            if (next != null) {
                if (!(next.getCommand() instanceof HelpCommand)) {
                    current = next;
                }
                continue;
            }
            if (subcommands.isEmpty() || !current.getCommandSpec().positionalParameters().isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(message(current, arg));
        }
        return Optional.empty();
    }

    private static String message(CommandLine parent, String word) {
        String qualified = parent.getCommandSpec().qualifiedName();
        List<String> names = parent.getSubcommands().keySet().stream().toList();
        StringBuilder text = new StringBuilder("unknown command '").append(word).append("' for '").append(qualified).append("'");
        closest(word, names).ifPresentOrElse(
                best -> text.append("; did you mean '").append(qualified).append(' ').append(best).append("'?"),
                () -> text.append('.'));
        text.append(" The commands are: ").append(String.join(", ", names)).append("; '").append(qualified)
                .append(" help <command>' describes one.");
        return text.toString();
    }

    static Optional<String> closest(String word, List<String> names) {
        return names.stream()
                .filter(name -> distance(name, word) <= MAX_TYPO_DISTANCE || (word.length() >= 2 && name.startsWith(word)))
                .min(Comparator.comparingInt(name -> distance(name, word)));
    }

    /** Edits (insert, delete, replace, swap two neighbours) turning {@code a} into {@code b}. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
