package org.jperfetto.producer.track;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;

/**
 * A steady TrackEvent load for a ring buffer to wrap on: each of {@code threads} threads emits
 * {@code burst} slices named "ring_t&lt;thread&gt;" (int arg "i", its index on that thread) every
 * {@code pauseMs}, until stopped; and what a wrapped trace of it holds, read as trace_processor
 * would ({@link DecodedEvents}).
 */
final class RingWorkload implements AutoCloseable {
  static final Category CATEGORY = Category.of("ring");
  static final String ARG = "i";

  private final TrackEvent te;
  private final List<Thread> workers = new ArrayList<>();
  private final long[] emitted;
  private volatile boolean running = true;

  RingWorkload(TrackEvent te, int threads, int burst, long pauseMs) {
    this.te = te;
    this.emitted = new long[threads];
    for (int t = 0; t < threads; t++) {
      int thread = t;
      workers.add(Thread.ofPlatform().name("ring-" + t).start(() -> run(thread, burst, pauseMs)));
    }
  }

  static String sliceName(int thread) {
    return "ring_t" + thread;
  }

  private void run(int thread, int burst, long pauseMs) {
    String name = sliceName(thread);
    long i = 0;
    while (running) {
      for (int k = 0; k < burst; k++, i++) {
        te.begin(CATEGORY, name, ARG, i);
        te.end(CATEGORY);
      }
      emitted[thread] = i;
      LockSupport.parkNanos(pauseMs * 1_000_000);
    }
  }

  /** Stops the threads; returns the slices each emitted. */
  long[] stop() throws InterruptedException {
    running = false;
    for (Thread w : workers) {
      w.join();
    }
    return emitted.clone();
  }

  @Override
  public void close() {
    try {
      stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the workload's threads", e);
    }
  }

  /**
   * What a trace of this workload holds: slice begins in the file, those trace_processor reads
   * (interned data resolved), per thread the indices of the readable ones, the decoder's errors, the
   * service's bytes written and chunks overwritten.
   */
  record Wrapped(long beginsInFile, long readableBegins, Map<Integer, List<Long>> readableIndices,
      List<String> errors, long bytesWritten, long chunksOverwritten, int clears) {
    double readableShare() {
      return beginsInFile == 0 ? 0 : (double) readableBegins / beginsInFile;
    }

    /** Errors other than "needs state before any was set" (the overwritten head of a sequence). */
    List<String> unexpectedErrors() {
      return errors.stream().filter(e -> !e.startsWith("packet needs incremental state before any was set"))
          .toList();
    }

    /**
     * Threads whose readable slices are not one unbroken run ending at their last emitted slice:
     * after the first clear in the ring, everything of a thread must be readable.
     */
    List<String> brokenTails(long[] emitted) {
      List<String> broken = new ArrayList<>();
      for (int t = 0; t < emitted.length; t++) {
        List<Long> ids = readableIndices.getOrDefault(t, List.of());
        if (ids.isEmpty()) {
          broken.add("thread " + t + ": nothing readable of " + emitted[t]);
          continue;
        }
        long first = ids.get(0);
        long last = ids.get(ids.size() - 1);
        if (last != emitted[t] - 1 || ids.size() != last - first + 1) {
          broken.add("thread " + t + ": readable " + ids.size() + " in [" + first + ", " + last + "], emitted "
              + emitted[t]);
        }
      }
      return broken;
    }

    static Wrapped of(byte[] trace) throws Exception {
      DecodedEvents d = new DecodedEvents();
      long begins = 0;
      long bytes = 0;
      long overwritten = 0;
      for (TracePacket p : Trace.parseFrom(trace).getPacketList()) {
        if (p.hasTraceStats()) {
          bytes = 0;
          overwritten = 0;
          for (TraceStats.BufferStats b : p.getTraceStats().getBufferStatsList()) {
            bytes += b.getBytesWritten();
            overwritten += b.getChunksOverwritten();
          }
        }
        if (p.getTrustedPacketSequenceId() == 1) { // the service's own packets
          continue;
        }
        if (p.hasTrackEvent() && p.getTrackEvent().getType() == org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN) {
          begins++;
        }
        d.add(p.getTrustedPacketSequenceId(), p);
      }
      Map<Integer, List<Long>> indices = new TreeMap<>();
      Map<String, Integer> threadOf = new HashMap<>();
      List<DecodedEvents.Event> readable = d.ofType(org.jperfetto.protos.TrackEvent.Type.TYPE_SLICE_BEGIN);
      for (DecodedEvents.Event e : readable) {
        if (e.name() == null || !e.name().startsWith("ring_t")) {
          continue;
        }
        int t = threadOf.computeIfAbsent(e.name(), n -> Integer.parseInt(n.substring("ring_t".length())));
        indices.computeIfAbsent(t, k -> new ArrayList<>()).add((Long) e.args().get(ARG));
      }
      indices.values().forEach(l -> l.sort(null));
      int clears = d.clearedCount.values().stream().mapToInt(Integer::intValue).sum();
      return new Wrapped(begins, readable.size(), indices, List.copyOf(d.errors), bytes, overwritten, clears);
    }
  }
}
