package org.jperfetto.producer.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.testing.ChildJvm;
import org.jperfetto.tracing.InProcessSession;
import org.jperfetto.tracing.InProcessTracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Java runtime without the jdk.jfr module (a jlinked one that left it out; here a child JVM with
 * --limit-modules): an app that registers jvm.jfr still starts and traces, its TrackEvent slices all
 * land in the trace, and the log says once, in words, that the JVM's events and stack samples are
 * not recorded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NoJfrRuntimeIT {
  static final int SLICES = 100;
  static final String WARNING = "this Java runtime has no jdk.jfr module";

  /** The app: TrackEvent and jvm.jfr in one producer, two sessions asking for both. */
  public static void main(String[] args) throws Exception {
    Category app = Category.of("app");
    TrackEvent te = TrackEvent.builder().categories(app).build();
    TraceConfig config = TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(1024))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(TrackEvent.DATA_SOURCE_NAME)))
        .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder()
            .setName(JfrDataSource.NAME)))
        .build();
    try (InProcessTracing tracing = InProcessTracing.start(TracingProducer.builder("no-jfr-app")
        .dataSource(te.dataSource()).dataSource(JfrDataSource.create()))) {
      for (int round = 0; round < 2; round++) {
        try (InProcessSession _ = tracing.newSession(config).writeTo(Path.of(args[0] + round)).start()) {
          for (int i = 0; i < SLICES; i++) {
            te.begin(app, "work");
            te.end(app);
          }
        }
      }
    }
  }

  @TempDir Path dir;

  @Test
  void tracesWithoutJfrAndSaysSoOnce() throws Exception {
    List<String> flags = new ArrayList<>(List.of("--limit-modules", "java.se,jdk.unsupported"));
    List<String> command = ChildJvm.command(flags, System.getProperty("java.class.path"),
        NoJfrRuntimeIT.class.getName(), dir.resolve("t").toString());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(50, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), output);
    assertEquals(1, output.split(WARNING, -1).length - 1, "said exactly once: " + output);
    assertFalse(output.contains("Exception"), output);
    for (int round = 0; round < 2; round++) {
      Trace trace = Trace.parseFrom(Files.readAllBytes(dir.resolve("t" + round)));
      long begins = trace.getPacketList().stream().filter(TracePacket::hasTrackEvent)
          .filter(x -> x.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN).count();
      assertEquals(SLICES, begins, "round " + round);
    }
  }
}
