package org.jperfetto.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.jperfetto.testing.ChildJvm;

/** Host and client in two JVM processes, over a real socket. */
@Timeout(120)
class IpcCrossProcessIT {
  @TempDir
  Path dir;
  final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  final List<String> events = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  static Process child(String mode, String path) throws IOException {
    List<String> command = ChildJvm.command(IpcChildMain.class.getName(), mode, path);
    return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  static List<String> lines(Process process) throws IOException {
    List<String> lines = new ArrayList<>();
    try (BufferedReader reader =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = reader.readLine()) != null; ) {
        lines.add(line);
      }
    }
    return lines;
  }

  static String firstLine(Process process) throws IOException {
    return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
  }

  @Test
  void clientInAnotherProcess() throws Exception {
    String path = dir.resolve("host.sock").toString();
    try (IpcHost host = IpcHost.start(path, List.of(IpcChildMain.service(timer, listener(events))))) {
      Process process = child("client", path);
      List<String> out = lines(process);
      assertTrue(process.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, process.exitValue(), out.toString());
      assertEquals("INVOKED 10000", out.get(0));
      assertEquals("STREAMED 1000", out.get(1));
      assertTrue(out.get(2).startsWith("FD pipe:["), out.toString());
      assertEquals("MISSING METHOD_NOT_FOUND", out.get(3));
      IpcIT.waitFor(() -> events.size() == 2);
      assertEquals(List.of("bound " + process.pid(), "gone " + process.pid()), events);
      assertEquals(10_000 + 2, host.stats().invocations());
    }
  }

  static ServiceListener listener(List<String> events) {
    return new ServiceListener() {
      @Override
      public void onClientBound(ClientInfo client) {
        events.add("bound " + client.pid());
      }

      @Override
      public void onClientDisconnected(ClientInfo client) {
        events.add("gone " + client.pid());
      }
    };
  }

  @Test
  void clientKilledMidStreamLeavesTheHostServingOthers() throws Exception {
    String path = dir.resolve("host.sock").toString();
    try (IpcHost host = IpcHost.start(path, List.of(IpcChildMain.service(timer, listener(events))))) {
      Process process = child("stream", path);
      assertEquals("STREAMING", firstLine(process));
      process.destroyForcibly();
      assertTrue(process.waitFor(30, TimeUnit.SECONDS));
      IpcIT.waitFor(() -> events.contains("gone " + process.pid()));
      IpcIT.waitFor(() -> host.stats().connections() == 0);
      Thread.sleep(20); // the stream keeps ticking into a closed connection: harmless
      try (IpcClient client = IpcClient.connect(path)) {
        BoundService greeter = client.bind("Greeter").get(20, TimeUnit.SECONDS);
        assertEquals(ByteString.copyFromUtf8("alive"),
            greeter.invoke("Echo", ByteString.copyFromUtf8("alive")).get(20, TimeUnit.SECONDS).bytes());
      }
    }
  }

  @Test
  void hostKilledMidStreamFailsTheClientsCalls() throws Exception {
    String path = dir.resolve("child.sock").toString();
    Process process = child("host", path);
    try {
      assertTrue(firstLine(process).startsWith("READY"));
      CompletableFuture<IpcException> lost = new CompletableFuture<>();
      try (IpcClient client = IpcClient.connect(path, lost::complete)) {
        BoundService greeter = client.bind("Greeter").get(20, TimeUnit.SECONDS);
        List<Reply> ticks = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> stream = greeter.invokeStreaming("Forever", ByteString.EMPTY, -1, ticks::add);
        IpcIT.waitFor(() -> ticks.size() >= 10);
        process.destroyForcibly();
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> stream.get(20, TimeUnit.SECONDS));
        assertEquals(IpcException.Kind.CONNECTION_LOST, ((IpcException) e.getCause()).kind());
        assertEquals(IpcException.Kind.CONNECTION_LOST, lost.get(20, TimeUnit.SECONDS).kind());
        assertTrue(ticks.stream().allMatch(Reply::hasMore));
      }
    } finally {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
