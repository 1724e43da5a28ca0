package org.jperfetto.service.ipc;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jperfetto.ipc.DefaultSockets;

/**
 * Where jtraced listens unless told otherwise, as upstream decides it: the environment
 * variables, else /run/perfetto/ when that directory is accessible, else /tmp.
 */
public final class SocketPaths {
  public static final String PRODUCER_ENV = DefaultSockets.PRODUCER_ENV;
  public static final String CONSUMER_ENV = DefaultSockets.CONSUMER_ENV;
  public static final String RUN_DIR = DefaultSockets.RUN_DIR;
  public static final String RUN_PRODUCER = DefaultSockets.RUN_PRODUCER;
  public static final String RUN_CONSUMER = DefaultSockets.RUN_CONSUMER;
  public static final String TMP_PRODUCER = DefaultSockets.TMP_PRODUCER;
  public static final String TMP_CONSUMER = DefaultSockets.TMP_CONSUMER;

  private SocketPaths() {}

  /** The producer socket(s), possibly a comma-separated list. */
  public static String defaultProducer() {
    return producer(System.getenv(), Path.of(RUN_DIR));
  }

  public static String defaultConsumer() {
    return consumer(System.getenv(), Path.of(RUN_DIR));
  }

  static String producer(Map<String, String> env, Path runDir) {
    return DefaultSockets.producer(env.get(PRODUCER_ENV), runDir);
  }

  static String consumer(Map<String, String> env, Path runDir) {
    return DefaultSockets.consumer(env.get(CONSUMER_ENV), runDir);
  }

  /** Splits a comma-separated socket list; empty entries are dropped. */
  public static List<String> split(String names) {
    List<String> out = new ArrayList<>();
    for (String s : names.split(",")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("no socket path in \"" + names + "\"");
    }
    return out;
  }
}
