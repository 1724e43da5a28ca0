package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jperfetto.testing.Fixtures;

/**
 * Reads the captures of real Perfetto traffic in test-fixtures/interop ({@link Fixtures#interop}):
 * the byte stream of each socket direction, cut into IPC frames, and
 * the per-syscall log with the fds passed by SCM_RIGHTS.
 */
final class InteropCaptures {
  private InteropCaptures() {}

  static Path interopDir() {
    return Fixtures.interop();
  }

  /** The session folders (those holding a trace.pftrace), sorted by name. */
  static List<Path> sessionFolders() {
    try (Stream<Path> s = Files.list(interopDir())) {
      List<Path> folders = s.filter(p -> Files.isRegularFile(p.resolve("trace.pftrace"))).sorted().toList();
      assertTrue(folders.size() >= 4, "expected the four session folders, found " + folders);
      return folders;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One socket of one process: the bytes it sent and received on fd {@code fd}. */
  record Connection(Path folder, String process, int fd) {
    Path stream(String dir) {
      return folder.resolve(process + ".ipc.fd" + fd + "." + dir + ".bin");
    }

    Path ioLog() {
      return folder.resolve(process + ".ipc.jsonl");
    }

    @Override
    public String toString() {
      return folder.getFileName() + "/" + process + ".fd" + fd;
    }
  }

  private static final Pattern STREAM_NAME = Pattern.compile("(.+)\\.ipc\\.fd(\\d+)\\.send\\.bin");

  static List<Connection> connections() {
    List<Connection> all = new ArrayList<>();
    for (Path folder : sessionFolders()) {
      try (Stream<Path> s = Files.list(folder)) {
        s.map(p -> STREAM_NAME.matcher(p.getFileName().toString()))
            .filter(Matcher::matches)
            .map(m -> new Connection(folder, m.group(1), Integer.parseInt(m.group(2))))
            .filter(c -> Files.isRegularFile(c.stream("recv")))
            .sorted((a, b) -> a.toString().compareTo(b.toString()))
            .forEach(all::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return all;
  }

  static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One IPC frame of a stream: where its length prefix starts, its bytes, and it parsed. */
  record Frame(long offset, ByteString bytes, IPCFrame frame) {}

  /** Cuts a stream into frames (u32 little-endian length, then the IPCFrame bytes). */
  static List<Frame> frames(byte[] stream, String what) {
    List<Frame> frames = new ArrayList<>();
    ByteBuffer buf = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    while (buf.hasRemaining()) {
      int offset = buf.position();
      if (buf.remaining() < 4) {
        fail(what + ": truncated length prefix at offset " + offset);
      }
      int size = buf.getInt();
      if (size < 0 || size > buf.remaining()) {
        fail(what + ": frame size out of stream: offset=" + offset + " size=" + size);
      }
      ByteString bytes = ByteString.copyFrom(stream, buf.position(), size);
      buf.position(buf.position() + size);
      try {
        frames.add(new Frame(offset, bytes, IPCFrame.parseFrom(bytes)));
      } catch (InvalidProtocolBufferException e) {
        fail(what + ": frame at offset " + offset + " is not an IPCFrame: " + e.getMessage());
      }
    }
    return frames;
  }

  /** One sendmsg/recvmsg: where its bytes sit in the stream of its direction, and fds passed. */
  record IoRecord(long offset, byte[] bytes, List<Integer> scmRights) {
    boolean covers(long streamOffset) {
      return streamOffset >= offset && streamOffset < offset + bytes.length;
    }
  }

  private static final Pattern IO_RECORD = Pattern.compile(
      "\"fd\": (\\d+), \"dir\": \"(send|recv)\", \"len\": (\\d+), \"hex\": \"([0-9a-f]*)\","
          + " \"scm_rights\": (null|\\[[0-9, ]*\\])");

  /** The records of one fd and direction, in order, with their offsets in that stream. */
  static List<IoRecord> ioRecords(Connection c, String dir) {
    List<IoRecord> records = new ArrayList<>();
    long offset = 0;
    try {
      for (String line : Files.readAllLines(c.ioLog())) {
        if (line.contains("\"eof\": true")) {
          continue; // the peer closed the socket: no bytes
        }
        Matcher m = IO_RECORD.matcher(line);
        if (!m.find()) {
          fail(c + ": unreadable io record: " + line);
        }
        if (Integer.parseInt(m.group(1)) != c.fd() || !m.group(2).equals(dir)) {
          continue;
        }
        byte[] bytes = HexFormat.of().parseHex(m.group(4));
        assertTrue(bytes.length == Integer.parseInt(m.group(3)), c + ": io record length disagrees: " + line);
        String fds = m.group(5);
        List<Integer> scm = fds.equals("null") || fds.equals("[]") ? List.of()
            : Arrays.stream(fds.substring(1, fds.length() - 1).split(",")).map(String::trim).map(Integer::valueOf)
                .toList();
        records.add(new IoRecord(offset, bytes, scm));
        offset += bytes.length;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return records;
  }
}
