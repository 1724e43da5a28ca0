package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jperfetto.producer.jfr.DecodedSamples;
import org.jperfetto.producer.jfr.HotMethods;
import org.jperfetto.producer.jfr.StackSampleEncoder;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * StackSampleEncoder over a real TraceWriter with JFR's own execution samples (recorded once,
 * read back from the file: the same RecordedStackTrace object for each repeat of a stack, as a
 * stream hands them over), decoded back with the interned data resolved.
 */
class StackSampleEncoderTest {
  private static final String SPIN_THREAD = "encoder-test-spin";
  static volatile long spinSink;

  @TempDir Path dir;

  @Test
  void aClearedStateInternsItsStacksAgainWithoutReadingJfrsFramesAgain() throws Exception {
    List<RecordedEvent> samples = recordSamples();
    try (TestSink sink = new TestSink(TestSink.Mode.SYNC, 64, 4096, 4 << 20)) {
      TraceWriter w = sink.newWriter(BufferExhaustedPolicy.STALL);
      StackSampleEncoder encoder = new StackSampleEncoder((int) ProcessHandle.current().pid(), 64, false);
      long ts = 1_000;
      long resolvedInFirstState = 0;
      int states = 3;
      for (int generation = 0; generation < states; generation++) { // a new generation: a clear
        for (RecordedEvent e : samples) {
          assertTrue(encoder.write(ts++, e.getThread("sampledThread"), e.getStackTrace(), false, w, generation));
          w.finishTracePacket();
        }
        if (generation == 0) {
          resolvedInFirstState = encoder.framesResolved();
        }
      }
      w.close();
      List<TracePacket> packets = new ArrayList<>();
      for (ServiceSide.Read r : sink.service.readAll()) {
        packets.add(TracePacket.parseFrom(r.data()));
      }
      DecodedSamples decoded = new DecodedSamples(packets);

      assertEquals(states, encoder.resets());
      assertEquals(states, decoded.clears, "each state opens with a cleared-state packet");
      assertTrue(resolvedInFirstState > 0, "the first state read JFR's frames");
      assertEquals(resolvedInFirstState, encoder.framesResolved(), "later states interned what was resolved");
      assertEquals(states * samples.size(), encoder.stackHits() + distinctStacks(samples),
          "every stack but each distinct one's first sample found by identity");
      // Every state decodes to the same stacks: its own interned data, complete.
      int n = samples.size();
      assertEquals(states * n, decoded.samples.size());
      for (int s = 1; s < states; s++) {
        for (int i = 0; i < n; i++) {
          DecodedSamples.Sample first = decoded.samples.get(i);
          DecodedSamples.Sample again = decoded.samples.get(s * n + i);
          assertEquals(first.frames(), again.frames(), "sample " + i + " in state " + s);
          assertEquals(first.tid(), again.tid());
          assertEquals(s, again.state() - first.state(), "sample " + i + " in state " + s);
        }
      }
      String hot = HotMethods.class.getName() + ".spin";
      long spinning = decoded.samples.stream().filter(x -> x.leaf().equals(hot)).count();
      assertTrue(spinning >= decoded.samples.size() / 2, "the spinning method is the leaf: " + spinning + " of "
          + decoded.samples.size() + ", e.g. " + decoded.samples.get(0).frames());
      assertFalse(decoded.threadNames.isEmpty());
    }
  }

  private static long distinctStacks(List<RecordedEvent> samples) {
    return samples.stream().map(RecordedEvent::getStackTrace)
        .collect(java.util.stream.Collectors.toCollection(
            () -> java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()))).size();
  }

  /** JFR's execution samples of a thread spinning for a while, as read back from the recording. */
  private List<RecordedEvent> recordSamples() throws Exception {
    Path file = dir.resolve("samples.jfr");
    try (Recording r = new Recording()) {
      r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
      r.start();
      Thread t = Thread.ofPlatform().name(SPIN_THREAD)
          .start(() -> spinSink = HotMethods.spin(TimeUnit.MILLISECONDS.toNanos(300)));
      t.join();
      r.stop();
      r.dump(file);
    }
    List<RecordedEvent> samples = new ArrayList<>();
    for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
      if (e.getStackTrace() != null && e.getThread("sampledThread") != null
          && SPIN_THREAD.equals(e.getThread("sampledThread").getJavaName())) {
        samples.add(e);
      }
    }
    Files.delete(file);
    assertTrue(samples.size() >= 10, "JFR's samples of the spinning thread: " + samples.size());
    return samples;
  }
}
