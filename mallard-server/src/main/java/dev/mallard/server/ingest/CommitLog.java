// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A queue's registrations: one JSON line per written flush, appended and fsynced before its files are renamed into
 * place. A line is the commit: a flush whose line is in the log is acknowledged and its files are (or, after a crash,
 * are made) visible; one whose line is not was never acknowledged and its staged files are deleted. A torn last line
 * (a crash mid-append) is cut off when the log is opened.
 */
final class CommitLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CommitLog.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One batch of a flush: who sent it, under which batch id ({@code -1}: none), and the rows it wrote. */
    record Batch(String producer, long batchId, long rows) {
        Batch {
            requireNonNull(producer, "producer is null");
        }
    }

    /** A watermark row: the batch (its index in the flush), its group's values, the least and greatest timestamp, the rows. */
    record Mark(int batch, Map<String, String> group, String min, String max, long rows) {
        Mark {
            group = Map.copyOf(group);
        }
    }

    /**
     * One flush.
     *
     * @param at when it was committed, RFC 3339
     * @param files the written files, relative to the queue's directory
     */
    record Commit(long seq, String at, List<String> files, long bytes, long rows, List<Batch> batches, List<Mark> marks) {
        Commit {
            requireNonNull(at, "at is null");
            files = List.copyOf(files);
            batches = List.copyOf(batches);
            marks = List.copyOf(marks);
        }
    }

    private final Path file;
    private final FileChannel channel;
    private final List<Commit> commits;

    private CommitLog(Path file, FileChannel channel, List<Commit> commits) {
        this.file = file;
        this.channel = channel;
        this.commits = commits;
    }

    /** Opens (creating) the log, cutting a torn last line off; {@link #commits()} holds what it records. */
    static CommitLog open(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        List<Commit> commits = new ArrayList<>();
        byte[] bytes = Files.readAllBytes(file);
        int start = 0;
        long good = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == '\n') {
                String line = new String(bytes, start, i - start, StandardCharsets.UTF_8);
                try {
                    commits.add(JSON.readValue(line, Commit.class));
                } catch (IOException e) {
                    break;
                }
                start = i + 1;
                good = start;
            }
        }
        if (good < bytes.length) {
            LOG.warn("ingestion commit log had a torn tail, cut off file={} bytes={}", file, bytes.length - good);
            channel.truncate(good);
            channel.force(true);
        }
        channel.position(good);
        return new CommitLog(file, channel, commits);
    }

    List<Commit> commits() {
        return List.copyOf(commits);
    }

    /** Appends one commit and forces it to the disk: when this returns, the flush is committed. */
    void append(Commit commit) throws IOException {
        byte[] line = (JSON.writeValueAsString(commit) + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.wrap(line);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        channel.force(false);
        commits.add(commit);
    }

    Path file() {
        return file;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
