package org.jperfetto.service.ipc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.GetAsyncCommandResponse;
import org.jperfetto.protos.TraceConfig;

/**
 * The main of a child JVM that {@link OtherUidsIT} runs as another uid (setpriv), so that jtraced
 * sees a peer uid other than its own. It reports on stdout, one line per event, and holds its
 * connections until stdin closes:
 *
 * <ul>
 *   <li>{@code consumers SOCKET N}: N consumers each enable a 4 KiB ring session; "enabled N".
 *   <li>{@code producer SOCKET NAME DS}: a producer registering DS; "connected" or
 *       "refused MESSAGE", then "command KIND" per async command and "disconnected" when dropped.
 * </ul>
 */
final class OtherUidClient {
  /** Built here rather than taken from the test classes: the child has no JUnit on its class path. */
  static final TraceConfig RING_4K = TraceConfig.newBuilder()
      .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4)
          .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.RING_BUFFER))
      .addDataSources(TraceConfig.DataSource.newBuilder()
          .setConfig(DataSourceConfig.newBuilder().setName(SocketFixture.DS)))
      .build();

  private OtherUidClient() {}

  public static void main(String[] args) throws Exception {
    List<AutoCloseable> open = new ArrayList<>();
    try {
      switch (args[0]) {
        case "consumers" -> {
          int n = Integer.parseInt(args[2]);
          for (int i = 0; i < n; i++) {
            TracingConsumer c = TracingConsumer.connect(args[1]);
            open.add(c);
            c.enableTracing(RING_4K);
          }
          say("enabled " + n);
        }
        case "producer" -> {
          SocketProducer p;
          try {
            p = SocketProducer.connect(args[1], args[2], args[3]);
          } catch (Exception e) {
            say("refused " + e);
            break;
          }
          open.add(p);
          say("connected");
          p.disconnected.thenRun(() -> say("disconnected"));
          Thread.ofPlatform().daemon().start(() -> {
            try {
              while (true) {
                GetAsyncCommandResponse cmd = p.commands.poll(1, TimeUnit.DAYS);
                if (cmd != null) {
                  say("command " + cmd.getCmdCase());
                }
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
        }
        default -> throw new IllegalArgumentException("unknown mode: " + args[0]);
      }
      // Hold everything open until the test closes our stdin.
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    } finally {
      for (AutoCloseable c : open) {
        c.close();
      }
    }
    System.exit(0);
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
