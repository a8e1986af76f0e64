// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A view set as a JSON file ({@code dbsp_save(path)}, {@code dbsp_load(path)}): the seed's layout
 * ({@code tracked_tables}, {@code views} with {@code name}, {@code sql}, {@code sources}, {@code created_at}) plus
 * Mallard's {@code format} and {@code settings}. Only definitions travel; a load builds every view from the rows its
 * tables hold in the database it is loaded into.
 */
record ViewSetFile(List<String> trackedTables, List<View> views, Settings settings) {
    static final String FORMAT = "mallard-views/1";
    private static final ObjectMapper JSON = new ObjectMapper();

    record View(String name, String sql, List<String> sources, long createdAt) {}

    record Settings(long recursionRounds, long recursionSeconds, long spillBytes, int parallel) {}

    ViewSetFile {
        trackedTables = List.copyOf(trackedTables);
        views = List.copyOf(views);
    }

    /** Writes the file through a temporary sibling, so a crash never leaves half a file under the name. */
    void write(Path path) {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", FORMAT);
        ArrayNode tracked = root.putArray("tracked_tables");
        trackedTables.forEach(tracked::add);
        ArrayNode list = root.putArray("views");
        for (View view : views) {
            ObjectNode node = list.addObject();
            node.put("name", view.name());
            node.put("sql", view.sql());
            ArrayNode sources = node.putArray("sources");
            view.sources().forEach(sources::add);
            node.put("created_at", view.createdAt());
        }
        ObjectNode values = root.putObject("settings");
        values.put("recursion_rounds", settings.recursionRounds());
        values.put("recursion_seconds", settings.recursionSeconds());
        values.put("spill_bytes", settings.spillBytes());
        values.put("parallel", settings.parallel());
        Path absolute = path.toAbsolutePath();
        Path temporary = absolute.resolveSibling(absolute.getFileName() + ".tmp");
        try {
            if (absolute.getParent() != null) {
                Files.createDirectories(absolute.getParent());
            }
            Files.writeString(temporary, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
            Files.move(temporary, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_VIEW_FILE_INVALID, "cannot write the view set to " + path + ": "
                    + e.getMessage() + "; check that its directory is writable", e);
        }
    }

    static ViewSetFile read(Path path) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(path));
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_VIEW_FILE_INVALID, "cannot read the view set " + path + ": "
                    + e.getMessage() + "; give a file written by dbsp_save(path)", e);
        }
        if (root == null || !root.path("views").isArray()) {
            throw invalid(path, "it has no \"views\" array");
        }
        List<String> tracked = new ArrayList<>();
        root.path("tracked_tables").forEach(t -> tracked.add(t.asText()));
        List<View> views = new ArrayList<>();
        for (JsonNode view : root.path("views")) {
            if (!view.path("name").isTextual() || !view.path("sql").isTextual()) {
                throw invalid(path, "a view without a \"name\" and \"sql\" string: " + view);
            }
            List<String> sources = new ArrayList<>();
            view.path("sources").forEach(s -> sources.add(s.asText()));
            views.add(new View(view.path("name").asText(), view.path("sql").asText(), sources, view.path("created_at").asLong(0)));
        }
        JsonNode s = root.path("settings");
        Settings settings = new Settings(s.path("recursion_rounds").asLong(RecursionLimit.DEFAULT_ROUNDS),
                s.path("recursion_seconds").asLong(RecursionLimit.DEFAULT_TIME.toSeconds()), s.path("spill_bytes").asLong(0),
                s.path("parallel").asInt(0));
        return new ViewSetFile(tracked, views, settings);
    }

    private static MallardException invalid(Path path, String why) {
        return new MallardException(ErrorCode.USER_VIEW_FILE_INVALID, "the view set " + path + " is not one dbsp_save "
                + "writes: " + why);
    }
}
