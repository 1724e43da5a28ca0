package org.jperfetto.producer.track;

import static org.jperfetto.producer.proto.TrackUuids.mix;
import static org.jperfetto.producer.proto.TrackUuids.nonZero;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.producer.proto.TrackUuids;

/**
 * This process as the trace shows it: pid, command line, a default process name and the uuid of its
 * process track ({@link TrackUuids}), from which thread and custom track uuids derive. Read once
 * from /proc (Linux) with
 * fallbacks, never on a hot path.
 */
final class ProcessInfo {
  private static final System.Logger LOG = System.getLogger(ProcessInfo.class.getName());
  /** The command line goes into every sequence's process descriptor: keep it short. */
  static final int MAX_CMDLINE_CHARS = 1024;
  private static final ProcessInfo CURRENT = load();

  private final int pid;
  private final List<String> cmdline;
  private final String defaultName;
  private final long uuid;

  ProcessInfo(int pid, List<String> cmdline, String defaultName, long uuid) {
    this.pid = pid;
    this.cmdline = List.copyOf(cmdline);
    this.defaultName = defaultName;
    this.uuid = uuid;
  }

  static ProcessInfo current() {
    return CURRENT;
  }

  int pid() {
    return pid;
  }

  List<String> cmdline() {
    return cmdline;
  }

  String defaultName() {
    return defaultName;
  }

  /** uuid of the process track. */
  long uuid() {
    return uuid;
  }

  /** uuid of the thread track of tid. */
  long threadUuid(long tid) {
    return TrackUuids.thread(uuid, tid);
  }

  /** uuid of the track of the virtual thread with that thread id. */
  long virtualThreadUuid(long threadId) {
    return nonZero(mix(uuid ^ mix(threadId + 0x632BE59BD9B4E019L)));
  }

  /** uuid of a custom track of this process. */
  long childUuid(String name, long id, boolean counter) {
    long h = fnv1a(name) ^ mix(id + (counter ? 0x5851F42D4C957F2DL : 0));
    return nonZero(mix(uuid ^ h));
  }

  /**
   * The kernel's id of the calling thread (what sched and ftrace data call tid), from
   * /proc/thread-self; the Java thread id when /proc is not there.
   */
  static long currentTid() {
    try {
      Path target = Files.readSymbolicLink(Path.of("/proc/thread-self"));
      return Long.parseLong(target.getFileName().toString());
    } catch (IOException | RuntimeException e) {
      return Thread.currentThread().threadId();
    }
  }

  private static ProcessInfo load() {
    int pid = (int) ProcessHandle.current().pid();
    List<String> cmdline = new ArrayList<>();
    try {
      byte[] raw = Files.readAllBytes(Path.of("/proc/self/cmdline"));
      int start = 0;
      int chars = 0;
      for (int i = 0; i < raw.length; i++) {
        if (raw[i] == 0) {
          String arg = new String(raw, start, i - start, StandardCharsets.UTF_8);
          start = i + 1;
          chars += arg.length();
          if (chars > MAX_CMDLINE_CHARS) {
            break;
          }
          cmdline.add(arg);
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "no /proc/self/cmdline: {0}", e.toString());
      ProcessHandle.current().info().command().ifPresent(cmdline::add);
    }
    String command = System.getProperty("sun.java.command", "");
    String name;
    if (!command.isBlank()) {
      name = command.strip().split("\\s+", 2)[0];
    } else if (!cmdline.isEmpty()) {
      name = Path.of(cmdline.get(0)).getFileName().toString();
    } else {
      name = "java";
    }
    return new ProcessInfo(pid, cmdline, name, TrackUuids.process(pid));
  }

  static long fnv1a(String s) {
    long h = 0xCBF29CE484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001B3L;
    }
    return h;
  }

}
