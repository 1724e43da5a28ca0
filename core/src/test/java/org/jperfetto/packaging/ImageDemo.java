package org.jperfetto.packaging;

import com.google.protobuf.TextFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jperfetto.os.UnixSocket;
import org.jperfetto.protos.TraceConfig;

/**
 * A tiny main that PackagingIT links into a test runtime image (patched into module org.jperfetto)
 * while the real {@code jperfetto}/{@code jtraced} mains are elsewhere. It touches what the image
 * must get right: native access for our module, protobuf-java as a named module (TextFormat reflects
 * over generated classes across the module boundary), and an FFM socket bind.
 *
 * <p>{@code ImageDemo [--listen [SOCKET]]}: prints facts, one per line; with --listen binds SOCKET
 * (default: $PERFETTO_CONSUMER_SOCK_NAME, as jtraced does, so scripts/measure-startup.sh can time
 * it), prints {@code ready SOCKET} and waits until stdin closes.
 */
public final class ImageDemo {
  private ImageDemo() {}

  public static void main(String[] args) throws IOException {
    Module module = ImageDemo.class.getModule();
    System.out.println("module " + module.getName());
    System.out.println("native-access " + module.isNativeAccessEnabled());
    System.out.println("protobuf-module " + TextFormat.class.getModule().getDescriptor());
    String tag = System.getProperty("jperfetto.demo.tag");
    if (tag != null) {
      System.out.println("tag " + tag);
    }

    TraceConfig config =
        TextFormat.parse("buffers { size_kb: 1024 } duration_ms: 2500", TraceConfig.class);
    TraceConfig back = TraceConfig.parseFrom(config.toByteArray());
    System.out.println("trace-config buffers=" + back.getBuffersCount()
        + " size_kb=" + back.getBuffers(0).getSizeKb() + " duration_ms=" + back.getDurationMs());

    if (args.length >= 1 && args.length <= 2 && args[0].equals("--listen")) {
      String path = args.length == 2 ? args[1] : System.getenv("PERFETTO_CONSUMER_SOCK_NAME");
      if (path == null) {
        System.err.println("--listen: no SOCKET and no PERFETTO_CONSUMER_SOCK_NAME");
        System.exit(2);
      }
      try (UnixSocket socket = UnixSocket.listen(path, 8)) {
        System.out.println("ready " + socket.address());
        System.out.flush();
        System.in.transferTo(java.io.OutputStream.nullOutputStream());
      } finally {
        Files.deleteIfExists(Path.of(path));
      }
    } else if (args.length != 0) {
      System.err.println("usage: ImageDemo [--listen [SOCKET]]");
      System.exit(2);
    }
  }
}
