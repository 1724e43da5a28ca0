package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jperfetto.os.Fds;

/**
 * The other process of {@link IpcCrossProcessIT}: {@code client <path>} runs the client checks and
 * exits 0; {@code stream <path>} starts an endless stream and waits to be killed; {@code host
 * <path>} serves {@link #service} until killed. Progress goes to stdout, one word a line.
 */
public final class IpcChildMain {
  private IpcChildMain() {}

  /** Echo, an fd probe, and an endless stream (one reply per millisecond). */
  static ServiceDefinition service(ScheduledExecutorService timer, ServiceListener listener) {
    return ServiceDefinition.builder("Greeter")
        .method("Echo", call -> call.reply(call.args()))
        .method("TakeFd", call -> {
          int fd = call.takeReceivedFd();
          call.reply(ByteString.copyFromUtf8(fd < 0 ? "none" : link(fd)));
          Fds.closeQuietly(fd);
        })
        .method("Stream", call -> {
          int n = Integer.parseInt(call.args().toStringUtf8());
          for (int i = 0; i < n; i++) {
            call.send(ByteString.copyFromUtf8(Integer.toString(i)), i < n - 1, -1);
          }
        })
        .method("Forever", call -> {
          AtomicInteger i = new AtomicInteger();
          timer.scheduleAtFixedRate(() -> call.replyMore(ByteString.copyFromUtf8("tick " + i.incrementAndGet())),
              0, 1, TimeUnit.MILLISECONDS);
        })
        .listener(listener)
        .build();
  }

  static String link(int fd) {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
    } catch (java.io.IOException e) {
      return "unreadable: " + e.getMessage();
    }
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String path = args[1];
    switch (mode) {
      case "client" -> runClient(path);
      case "stream" -> {
        IpcClient client = IpcClient.connect(path);
        BoundService greeter = client.bind("Greeter").get(20, TimeUnit.SECONDS);
        CompletableFuture<Void> first = new CompletableFuture<>();
        greeter.invokeStreaming("Forever", ByteString.EMPTY, -1, reply -> first.complete(null));
        first.get(20, TimeUnit.SECONDS);
        System.out.println("STREAMING");
        Thread.sleep(Long.MAX_VALUE);
      }
      case "host" -> {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        IpcHost host = IpcHost.start(path, List.of(service(timer, new ServiceListener() {})));
        System.out.println("READY " + host.address());
        Thread.sleep(Long.MAX_VALUE);
      }
      default -> throw new IllegalArgumentException("mode " + mode);
    }
  }

  private static void runClient(String path) throws Exception {
    try (IpcClient client = IpcClient.connect(path)) {
      BoundService greeter = client.bind("Greeter").get(20, TimeUnit.SECONDS);
      for (int i = 0; i < 10_000; i++) {
        ByteString args = ByteString.copyFromUtf8("call " + i);
        ByteString reply = greeter.invoke("Echo", args).get(20, TimeUnit.SECONDS).bytes();
        if (!reply.equals(args)) {
          throw new AssertionError("call " + i + " answered " + reply.toStringUtf8());
        }
      }
      System.out.println("INVOKED 10000");
      AtomicInteger next = new AtomicInteger();
      greeter.invokeStreaming("Stream", ByteString.copyFromUtf8("1000"), -1, reply -> {
        int expected = next.getAndIncrement();
        if (!reply.bytes().toStringUtf8().equals(Integer.toString(expected)) || reply.hasMore() != (expected < 999)) {
          throw new AssertionError("stream reply " + expected + " was " + reply);
        }
      }).get(20, TimeUnit.SECONDS);
      System.out.println("STREAMED " + next.get());
      int fd = Fds.dup(0); // our stdin pipe: the host must see the same pipe
      String mine = link(fd);
      String theirs = greeter.invoke("TakeFd", ByteString.EMPTY, fd).get(20, TimeUnit.SECONDS).bytes().toStringUtf8();
      System.out.println(mine.equals(theirs) ? "FD " + theirs : "FD MISMATCH " + mine + " vs " + theirs);
      try {
        greeter.invoke("Missing", ByteString.EMPTY).get(20, TimeUnit.SECONDS);
        System.out.println("MISSING ANSWERED");
      } catch (java.util.concurrent.ExecutionException e) {
        System.out.println("MISSING " + ((IpcException) e.getCause()).kind());
      }
    }
  }
}
