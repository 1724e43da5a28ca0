package org.jperfetto.producer.jfr;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import jdk.jfr.Recording;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.TracingProducer;

/**
 * The child JVM of {@link JfrBridgeIT}: a producer with {@code jvm.jfr} registered, its own JFR
 * recording (to compare with the trace), and a workload that collects, contends and parks, then a
 * burst of parks that runs until the parent has stopped the session. Talks over stdin/stdout lines.
 */
public final class JfrChild {
  static final long BURST_PARK_NANOS = 2_000_000;

  public static void main(String[] args) throws Exception {
    String producerSocket = args[0];
    Path jfrFile = Path.of(args[1]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Recording own = new Recording()) {
      own.setSettings(JfrConfig.parse(JfrBridgeIT.LEGACY_CONFIG).settings());
      own.start();
      TracingProducer producer = TracingProducer.builder("jfr-child").socketPath(producerSocket).start();
      DataSource<?> ds = JfrDataSource.register(producer);
      if (!producer.awaitConnected(Duration.ofSeconds(20))) {
        throw new IllegalStateException("not connected to " + producerSocket);
      }
      say("READY");
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (JfrDataSource.recordingInstances(ds) == 0) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("jvm.jfr never started recording");
        }
        Thread.sleep(5);
      }
      say("TRACING");
      JvmWorkload w = new JvmWorkload();
      JvmWorkload.allocate(64);
      w.contend();
      w.park(3);
      JvmWorkload.allocate(32);
      say("TID contender " + w.contenderTid);
      say("TID parker " + w.parkerTid);
      long[] burstTid = new long[1];
      Thread burst = new Thread(() -> {
        burstTid[0] = JvmWorkload.currentTid();
        while (!Thread.currentThread().isInterrupted()) {
          LockSupport.parkNanos(BURST_PARK_NANOS);
        }
      }, "jfr-burst");
      burst.start();
      Thread.sleep(20);
      say("TID burst " + burstTid[0]);
      say("WORKLOAD");
      String line = in.readLine(); // the parent stops the session, then says so
      if (!"STOPPED".equals(line)) {
        throw new IllegalStateException("expected STOPPED, got " + line);
      }
      burst.interrupt();
      burst.join();
      own.stop();
      own.dump(jfrFile);
      producer.close();
      say("DUMPED");
    }
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
