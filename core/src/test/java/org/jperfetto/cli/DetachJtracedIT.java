package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jperfetto --detach} then {@code --attach --stop} against a real jtraced (JperfettoIT uses
 * a fake service): the detached session keeps writing its file after the first command exits, and
 * the attaching command is told when the session ends.
 */
class DetachJtracedIT {
  @TempDir Path dir;
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  int run(String consumerSocket, String... args) {
    err.reset();
    CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]),
        new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true),
        Map.of("PERFETTO_CONSUMER_SOCK_NAME", consumerSocket), false);
    return Jperfetto.run(args, ctx);
  }

  String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void attachStopEndsADetachedWriteIntoFileSession() throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    Path cfg = Files.writeString(dir.resolve("d.pbtxt"),
        "write_into_file: true\nfile_write_period_ms: 100\nbuffers { size_kb: 64 }\n"
            + "data_sources { config { name: \"test.ds\" } }\n");
    Path file = dir.resolve("d.pftrace");
    try (ServiceHost _ = ServiceHost.start(ServiceHost.Options.of(p, c))) {
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        assertEquals(0, run(c, "--detach=k1", "-c", cfg.toString(), "--txt", "-o", file.toString()), err());
        Thread.sleep(300); // a few drain periods while nobody is attached
        assertEquals(0, run(c, "--is_detached=k1"), err());
        assertEquals(0, run(c, "--attach=k1", "--stop"), err());
      });
      Trace t = Trace.parseFrom(Files.readAllBytes(file));
      assertEquals(1, t.getPacketList().stream().filter(TracePacket::hasTraceConfig).count(), t.toString());
      assertTrue(t.getPacketList().stream().anyMatch(TracePacket::hasTraceStats), "the last drain ran");
      assertEquals(2, run(c, "--attach=k1"), "the session is gone after --stop");
    }
  }
}
