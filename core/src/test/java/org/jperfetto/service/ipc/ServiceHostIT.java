package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.GetAsyncCommandResponse.CmdCase;
import org.jperfetto.protos.TraceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The sockets of jtraced: paths, modes, stale and live files, errors. */
@Timeout(30)
class ServiceHostIT {
  @TempDir Path dir;

  ServiceHost.Options options() {
    return ServiceHost.Options.of(dir.resolve("p.sock").toString(), dir.resolve("c.sock").toString());
  }

  static String mode(Path p) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void producerSocketWorldWritableConsumerOwnerOnlyAndRemovedOnClose() throws Exception {
    try (ServiceHost host = ServiceHost.start(options())) {
      assertEquals("rw-rw-rw-", mode(dir.resolve("p.sock")));
      assertEquals("rw-------", mode(dir.resolve("c.sock")));
      assertEquals(dir.resolve("c.sock").toString(), host.consumerSocket());
    }
    assertFalse(Files.exists(dir.resolve("p.sock")));
    assertFalse(Files.exists(dir.resolve("c.sock")));
  }

  @Test
  void consumerSocketModeCanBeWidened() throws Exception {
    try (ServiceHost _ = ServiceHost.start(options().withConsumerSocketMode(0660))) {
      assertEquals("rw-rw----", mode(dir.resolve("c.sock")));
    }
  }

  @Test
  void staleSocketFileIsReplaced() throws Exception {
    String path = dir.resolve("p.sock").toString();
    UnixSocket.listen(path, 1).close(); // leaves the file behind with nobody listening
    assertTrue(Files.exists(Path.of(path)));
    try (ServiceHost _ = ServiceHost.start(options());
        SocketProducer p = SocketProducer.connect(path, "after-stale")) {
      assertTrue(p.client.isConnected());
    }
  }

  @Test
  void liveSocketIsRefusedWithAClearMessage() throws Exception {
    try (ServiceHost first = ServiceHost.start(options())) {
      IOException e = assertThrows(IOException.class, () -> ServiceHost.start(options()));
      assertTrue(e.getMessage().contains("another tracing service is listening on " + dir.resolve("p.sock")),
          e.getMessage());
      // the first one is untouched
      try (TracingConsumer c = TracingConsumer.connect(first.consumerSocket())) {
        assertTrue(c.isConnected());
      }
    }
  }

  @Test
  void unwritableDirectoryIsAClearError() throws Exception {
    boolean root = ((Integer) Files.getAttribute(dir, "unix:uid")) == 0
        && "0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
    Path ro = Files.createDirectory(dir.resolve("ro"));
    Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
    // root ignores directory modes, but nobody may create files in sysfs (EPERM)
    Path target = root ? Path.of("/sys/jperfetto-test.sock") : ro.resolve("p.sock");
    IOException e = assertThrows(IOException.class, () -> ServiceHost.start(
        ServiceHost.Options.of(target.toString(), dir.resolve("c.sock").toString())));
    assertTrue(e.getMessage().contains("not writable") && e.getMessage().contains(target.toString()),
        e.getMessage());
    assertFalse(Files.exists(dir.resolve("c.sock")));
  }

  @Test
  void missingDirectoryIsAClearError() {
    IOException missing = assertThrows(IOException.class, () -> ServiceHost.start(
        ServiceHost.Options.of(dir.resolve("nope/p.sock").toString(), dir.resolve("c.sock").toString())));
    assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
    assertFalse(Files.exists(dir.resolve("c.sock")));
  }

  @Test
  void commaSeparatedProducerSocketsAllServe() throws Exception {
    String a = dir.resolve("a.sock").toString();
    String b = dir.resolve("b.sock").toString();
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(a + "," + b, dir.resolve("c.sock").toString()));
        SocketProducer _ = SocketProducer.connect(a, "on-a");
        SocketProducer _ = SocketProducer.connect(b, "on-b")) {
      assertEquals(java.util.List.of(a, b), host.producerSockets());
      assertEquals(2, host.connectedProducers());
    }
  }

  @Test
  void abstractSocketNamesWork() throws Exception {
    String name = "@jperfetto-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(name + "-p", name + "-c"));
        SocketProducer _ = SocketProducer.connect(name + "-p", "abstract");
        TracingConsumer c = TracingConsumer.connect(name + "-c")) {
      assertTrue(c.getTraceStats().get(10, TimeUnit.SECONDS) != null);
      assertEquals(1, host.connectedProducers());
    }
  }

  @Test
  void clientsConnectingBeforeTheServiceIsUpAreServed() throws Exception {
    String p = dir.resolve("p.sock").toString();
    String c = dir.resolve("c.sock").toString();
    try (ServiceHost.Bound bound = ServiceHost.bind(options())) {
      // the sockets exist and accept into the backlog; nothing answers yet
      assertTrue(Files.exists(Path.of(p)) && Files.exists(Path.of(c)));
      CompletableFuture<SocketProducer> producer = CompletableFuture.supplyAsync(() -> {
        try {
          return SocketProducer.connect(p, "early", SessionIT.DS);
        } catch (Exception e) {
          throw new CompletionException(e);
        }
      });
      CompletableFuture<TracingConsumer> consumer = CompletableFuture.supplyAsync(() -> {
        try {
          return TracingConsumer.connect(c);
        } catch (Exception e) {
          throw new CompletionException(e);
        }
      });
      Thread.sleep(200);
      assertFalse(producer.isDone() || consumer.isDone(), "nobody can answer before serve()");
      try (ServiceHost host = bound.serve();
          SocketProducer early = producer.get(10, TimeUnit.SECONDS);
          TracingConsumer tc = consumer.get(10, TimeUnit.SECONDS)) {
        assertEquals(1, host.connectedProducers());
        tc.enableTracing(SessionIT.config(256, TraceConfig.BufferConfig.FillPolicy.RING_BUFFER));
        assertTrue(early.await(CmdCase.START_DATA_SOURCE).hasStartDataSource());
        tc.disableTracing().get(10, TimeUnit.SECONDS);
      }
    }
    assertFalse(Files.exists(Path.of(p)) || Files.exists(Path.of(c)), "socket files removed");
  }

  @Test
  void boundButNeverServedCleansUp() throws Exception {
    ServiceHost.bind(options()).close();
    assertFalse(Files.exists(dir.resolve("p.sock")) || Files.exists(dir.resolve("c.sock")));
    try (ServiceHost host = ServiceHost.start(options())) { // the paths are free again
      assertEquals(dir.resolve("c.sock").toString(), host.consumerSocket());
    }
  }

  @Test
  void chmodModesMapToPermissions() {
    assertEquals("rw-rw-rw-", PosixFilePermissions.toString(ServiceHost.permissions(0666)));
    assertEquals("rwxr-x--x", PosixFilePermissions.toString(ServiceHost.permissions(0751)));
    assertEquals("---------", PosixFilePermissions.toString(ServiceHost.permissions(0)));
  }
}
