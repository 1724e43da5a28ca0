import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain program for the attach and agent tests on JDKs older than jperfetto's (compiled for
 * JDK 11 by the tests): a thread called "jfr-hot" spinning in {@link #spin}, and a main thread
 * that allocates and calls System.gc() every 100 ms, printing "gc BEFORE AFTER" (System.nanoTime,
 * CLOCK_MONOTONIC) around each call. It prints "ready" first and exits with the status given as
 * its first argument once its standard input ends (or at once with a second argument "now").
 */
public class OldJdkTarget {
  static volatile boolean running = true;
  static volatile long sink;

  public static void main(String[] args) throws Exception {
    int status = Integer.parseInt(args[0]);
    System.out.println("ready on " + System.getProperty("java.version"));
    System.out.flush();
    if (args.length > 1 && args[1].equals("now")) {
      System.exit(status);
    }
    Thread hot = new Thread(OldJdkTarget::spin, "jfr-hot");
    hot.setDaemon(true);
    hot.start();
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
        while (in.readLine() != null) {
          // until the test closes it
        }
      } catch (Exception e) {
        // closed
      }
      running = false;
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();
    List<byte[]> keep = new ArrayList<>();
    while (running) {
      for (int i = 0; i < 200; i++) {
        keep.add(new byte[4096]);
      }
      keep.clear();
      long before = System.nanoTime();
      System.gc();
      long after = System.nanoTime();
      System.out.println("gc " + before + " " + after);
      System.out.flush();
      Thread.sleep(100);
    }
    System.exit(status);
  }

  static void spin() {
    long x = 0x9E3779B97F4A7C15L;
    while (true) {
      for (int i = 0; i < 10_000; i++) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
      }
      sink = x;
    }
  }
}
