package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jperfetto.consumer.ConsumerSockets;
import org.jperfetto.producer.ProducerSockets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Upstream's socket rule (default_socket.cc): the variable if set, else /run/perfetto/, else /tmp. */
class DefaultSocketsTest {
  @TempDir
  Path dir;

  @Test
  void theEnvironmentWinsWhenSet() {
    assertEquals("/x/p", DefaultSockets.producer(Map.of("PERFETTO_PRODUCER_SOCK_NAME", "/x/p"), dir));
    assertEquals("/x/c", DefaultSockets.consumer(Map.of("PERFETTO_CONSUMER_SOCK_NAME", "/x/c"), dir));
  }

  @Test
  void anEmptyVariableIsSetAsUpstreamReadsIt() {
    // upstream checks getenv() for null only: an empty name is used as it is
    assertEquals("", DefaultSockets.producer(Map.of("PERFETTO_PRODUCER_SOCK_NAME", ""), dir));
    assertEquals("", DefaultSockets.consumer(Map.of("PERFETTO_CONSUMER_SOCK_NAME", ""), dir));
  }

  @Test
  void runDirectoryWhenSearchable() {
    assertEquals("/run/perfetto/traced-producer.sock", DefaultSockets.producer(Map.of(), dir));
    assertEquals("/run/perfetto/traced-consumer.sock", DefaultSockets.consumer(Map.of(), dir));
  }

  @Test
  void tmpWhenTheRunDirectoryIsMissingOrNotADirectory() throws IOException {
    assertEquals("/tmp/perfetto-producer", DefaultSockets.producer(Map.of(), dir.resolve("absent")));
    assertEquals("/tmp/perfetto-consumer", DefaultSockets.consumer(Map.of(), dir.resolve("absent")));
    Path file = Files.createFile(dir.resolve("file"));
    assertEquals("/tmp/perfetto-producer", DefaultSockets.producer(Map.of(), file));
    assertEquals("/tmp/perfetto-consumer", DefaultSockets.consumer(Map.of(), file));
  }

  @Test
  void producerAndConsumerLibrariesUseTheSameRule() {
    assertEquals(DefaultSockets.producer(), ProducerSockets.defaultPath());
    assertEquals(DefaultSockets.consumer(), ConsumerSockets.defaultPath());
  }

  @Test
  void aProducerSocketListSplitsOnCommas() {
    assertEquals(List.of("/a", "@b"), DefaultSockets.split("/a,,@b,"));
    assertThrows(IllegalArgumentException.class, () -> DefaultSockets.split(" , "));
  }
}
