package org.jperfetto.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConsumerSocketsTest {
  @Test
  void environmentWins(@TempDir Path dir) {
    assertEquals("/x/y.sock", ConsumerSockets.resolve(Map.of("PERFETTO_CONSUMER_SOCK_NAME", "/x/y.sock"), dir));
  }

  @Test
  void runDirectoryWhenSearchable(@TempDir Path dir) {
    assertEquals("/run/perfetto/traced-consumer.sock", ConsumerSockets.resolve(Map.of(), dir));
  }

  @Test
  void tmpWhenRunDirectoryMissingOrNotADirectory(@TempDir Path dir) throws IOException {
    assertEquals("/tmp/perfetto-consumer", ConsumerSockets.resolve(Map.of(), dir.resolve("missing")));
    Path file = Files.createFile(dir.resolve("file"));
    assertEquals("/tmp/perfetto-consumer", ConsumerSockets.resolve(Map.of(), file));
  }

  @Test
  void flushFlagsPackLikeUpstream() {
    assertEquals(0x22, FlushFlags.CMD_TRACE_STOP.bits());
    assertEquals(FlushFlags.Initiator.PERFETTO_CMD, FlushFlags.CMD_TRACE_STOP.initiator());
    assertEquals(FlushFlags.Reason.TRACE_STOP, FlushFlags.CMD_TRACE_STOP.reason());
    assertEquals(0x34, FlushFlags.of(FlushFlags.Initiator.CONSUMER_SDK, FlushFlags.Reason.EXPLICIT).bits());
    assertEquals(FlushFlags.Reason.UNKNOWN, new FlushFlags(0xF).reason());
  }
}
