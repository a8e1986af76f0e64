// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One producer's spill files, {@code <spill directory>/<producer id>/<batch id>-<rows>.arrows[.gz]}: each written to a
 * temporary name, forced to disk and renamed into place, so a file that exists is whole. Replayed in batch-id order.
 */
final class SpillDirectory {
    private static final Pattern NAME = Pattern.compile("(\\d{19})-(\\d+)\\.arrows(\\.gz)?");

    private final Path directory;
    private final long maxBytes;
    private long bytes;

    SpillDirectory(Path root, String producerId, long maxBytes) throws IOException {
        this.directory = Files.createDirectories(root.resolve(producerId));
        this.maxBytes = maxBytes;
    }

    Path directory() {
        return directory;
    }

    /** The whole batches a previous producer with this id left, oldest first; half-written ones are removed. */
    List<SealedBatch> recover() throws IOException {
        List<SealedBatch> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                Matcher m = NAME.matcher(name);
                if (m.matches()) {
                    long size = Files.size(file);
                    found.add(new SealedBatch(Long.parseLong(m.group(1)), Integer.parseInt(m.group(2)), size, m.group(3) != null,
                            Optional.empty(), Optional.of(file)));
                    bytes += size;
                } else if (name.endsWith(".tmp")) {
                    Files.deleteIfExists(file);
                }
            }
        }
        found.sort(Comparator.comparingLong(SealedBatch::batchId));
        return found;
    }

    boolean hasRoomFor(long size) {
        return bytes + size <= maxBytes;
    }

    long bytes() {
        return bytes;
    }

    SealedBatch write(SealedBatch batch) throws IOException {
        byte[] payload = batch.payload().orElseThrow();
        String name = String.format("%019d-%d.arrows%s", batch.batchId(), batch.rows(), batch.gzip() ? ".gz" : "");
        Path temp = directory.resolve(name + ".tmp");
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(payload);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Path file = directory.resolve(name);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory();
        bytes += payload.length;
        return new SealedBatch(batch.batchId(), batch.rows(), payload.length, batch.gzip(), Optional.empty(), Optional.of(file));
    }

    byte[] read(SealedBatch batch) throws IOException {
        return Files.readAllBytes(batch.file().orElseThrow());
    }

    void delete(SealedBatch batch) throws IOException {
        Path file = batch.file().orElseThrow();
        if (Files.deleteIfExists(file)) {
            bytes -= batch.bytes();
        }
    }

    private void forceDirectory() {
        // The rename is durable only once the directory is; not every platform lets a directory be opened to force it.
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // best effort
        }
    }
}
