package org.jperfetto.producer.jfr;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import org.jperfetto.producer.jfr.JvmEvent.Arg;
import org.jperfetto.producer.jfr.JvmEvent.Counter;
import org.jperfetto.producer.jfr.JvmEvent.Lane;
import org.jperfetto.producer.jfr.JvmEvent.Slice;

/**
 * Turns one JFR event into what the trace shows: a slice for an event with a duration, an instant
 * for one without, counter samples for numbers (heap, CPU load, counts). Slices and instants go on a
 * lane of the OS thread JFR names (osThreadId is the Linux tid), one lane per group so that events
 * of different groups on one thread never have to nest ("GC" and "Safepoint" on the VM thread,
 * "JIT" on a compiler thread, "Locks" on the blocked thread); events without a thread go on a lane
 * of the process.
 *
 * <p>A function of the event and the config, except for one running sum: the sampled allocated
 * bytes, which the "JVM allocated bytes (sampled)" counter shows. One mapper per stream.
 */
final class JfrEventMapper {
  /** Longest string kept from JFR (class names, frames, messages). */
  static final int MAX_STRING = 256;

  private final JfrConfig config;
  private long sampledAllocatedBytes;

  /** A mapper for the events config selects. */
  public JfrEventMapper(JfrConfig config) {
    this.config = config;
  }

  /** The trace events for e; empty for a type the bridge does not map. */
  public List<JvmEvent> map(RecordedEvent e) {
    String type = e.getEventType().getName();
    List<JvmEvent> out = new ArrayList<>(2);
    switch (type) {
      case "jdk.GarbageCollection" -> {
        long duration = e.getDuration().toNanos();
        long pauses = longField(e, "sumOfPauses", duration);
        // A concurrent cycle spans more than its pauses and overlaps other collections: own lane.
        String lane = duration > pauses ? "GC cycle" : "GC";
        out.add(slice(e, EventGroup.GC, lane, string(e, "name", "GC"),
            args(e, "cause", "gcId", "sumOfPauses", "longestPause")));
      }
      case "jdk.GCPhasePause", "jdk.GCPhasePauseLevel1", "jdk.GCPhasePauseLevel2",
          "jdk.GCPhaseConcurrent", "jdk.GCPhaseConcurrentLevel1" ->
          out.add(slice(e, EventGroup.GC, "GC", string(e, "name", "GC phase"), args(e, "gcId")));
      case "jdk.GCHeapSummary" -> {
        long t = epochNanos(e.getStartTime());
        out.add(new Counter(t, "JVM heap used", "bytes", longField(e, "heapUsed", 0)));
        RecordedObject space = e.hasField("heapSpace") ? e.getValue("heapSpace") : null;
        if (space != null && space.hasField("committedSize")) {
          out.add(new Counter(t, "JVM heap committed", "bytes", space.getLong("committedSize")));
        }
      }
      case "jdk.SafepointBegin" -> out.add(slice(e, EventGroup.SAFEPOINT, "Safepoint", "Safepoint",
          args(e, "safepointId", "totalThreadCount", "jniCriticalThreadCount")));
      case "jdk.Compilation" -> {
        String method = e.hasField("method") ? method(e.getValue("method")) : "compilation";
        out.add(slice(e, EventGroup.JIT, "JIT", method,
            args(e, "compiler", "compileLevel", "compileId", "codeSize", "inlinedBytes", "isOsr", "succeded")));
      }
      case "jdk.JavaMonitorEnter" -> out.add(slice(e, EventGroup.LOCKS, "Locks", "Monitor enter",
          args(e, "monitorClass", "previousOwner")));
      case "jdk.JavaMonitorWait" -> out.add(slice(e, EventGroup.LOCKS, "Locks", "Monitor wait",
          args(e, "monitorClass", "notifier", "timeout", "timedOut")));
      case "jdk.ThreadPark" -> out.add(slice(e, EventGroup.LOCKS, "Locks", "Park",
          args(e, "parkedClass", "timeout")));
      case "jdk.ThreadSleep" -> out.add(slice(e, EventGroup.LOCKS, "Locks", "Sleep", args(e, "time")));
      case "jdk.ObjectAllocationSample" -> {
        long weight = longField(e, "weight", 0);
        out.add(instant(e, EventGroup.ALLOCATION, "Allocation", "Allocation sample", args(e, "objectClass", "weight")));
        sampledAllocatedBytes += weight;
        out.add(new Counter(epochNanos(e.getStartTime()), "JVM allocated bytes (sampled)", "bytes",
            sampledAllocatedBytes));
      }
      case "jdk.ExceptionStatistics" -> out.add(new Counter(epochNanos(e.getStartTime()),
          "JVM throwables created", "count", longField(e, "throwables", 0)));
      case "jdk.CPULoad" -> {
        long t = epochNanos(e.getStartTime());
        out.add(new Counter(t, "JVM CPU user", "%", 100.0 * e.getDouble("jvmUser")));
        out.add(new Counter(t, "JVM CPU system", "%", 100.0 * e.getDouble("jvmSystem")));
        out.add(new Counter(t, "Machine CPU", "%", 100.0 * e.getDouble("machineTotal")));
      }
      case "jdk.ThreadStart", "jdk.ThreadEnd" -> {
        // Put it on the started/ended thread, which JFR names in "thread".
        RecordedThread subject = e.hasField("thread") ? e.getValue("thread") : e.getThread();
        String name = type.equals("jdk.ThreadStart") ? "Thread start" : "Thread end";
        out.add(new JvmEvent.Instant(epochNanos(e.getStartTime()), lane(subject, "Threads"),
            category(EventGroup.THREADS), name, args(e, "parentThread"), stack(e)));
      }
      case "jdk.JavaThreadStatistics" -> out.add(new Counter(epochNanos(e.getStartTime()),
          "JVM live threads", "count", longField(e, "activeCount", 0)));
      case "jdk.VirtualThreadPinned" -> {
        // Pinned means the virtual thread holds its carrier: the slice goes on the carrier's lane
        // (a platform thread with a tid; one pin at a time per carrier, so pins never overlap there).
        // JFR names the carrier since JDK 24; without it the lane is the event thread's, which for a
        // virtual thread (no OS tid) is the process's.
        RecordedThread carrier = e.hasField("carrierThread") ? e.getValue("carrierThread") : null;
        RecordedThread on = carrier != null && carrier.getOSThreadId() > 0 ? carrier : e.getThread();
        List<Arg> args = args(e, "blockingOperation", "pinnedReason");
        args.addAll(virtualThread(e.getThread()));
        out.add(slice(e, on, EventGroup.VTHREADS, "Virtual threads", "Virtual thread pinned", args));
      }
      case "jdk.VirtualThreadSubmitFailed" -> out.add(instant(e, EventGroup.VTHREADS, "Virtual threads",
          "Virtual thread submit failed", args(e, "javaThreadId", "exceptionMessage")));
      case "jdk.ClassLoad" -> out.add(slice(e, EventGroup.CLASSLOADING, "Class loading", "Class load",
          args(e, "loadedClass", "initiatingClassLoader")));
      case "jdk.ClassLoadingStatistics" -> out.add(new Counter(epochNanos(e.getStartTime()),
          "JVM loaded classes", "count",
          longField(e, "loadedClassCount", 0) - longField(e, "unloadedClassCount", 0)));
      default -> { }
    }
    return out;
  }

  private Slice slice(RecordedEvent e, EventGroup group, String lane, String name, List<Arg> args) {
    return slice(e, e.getThread(), group, lane, name, args);
  }

  private Slice slice(RecordedEvent e, RecordedThread on, EventGroup group, String lane, String name, List<Arg> args) {
    long start = epochNanos(e.getStartTime());
    long end = epochNanos(e.getEndTime());
    return new Slice(start, Math.max(0, end - start), lane(on, lane), category(group), name, args, stack(e));
  }

  /** Which virtual thread an event on a carrier's lane is about: its name (if any) and Java id. */
  private static List<Arg> virtualThread(RecordedThread t) {
    if (t == null || !t.isVirtual()) {
      return List.of();
    }
    List<Arg> out = new ArrayList<>(2);
    if (t.getJavaName() != null && !t.getJavaName().isEmpty()) {
      out.add(new Arg("virtualThread", bounded(t.getJavaName())));
    }
    out.add(new Arg("virtualThreadId", t.getJavaThreadId()));
    return out;
  }

  private JvmEvent.Instant instant(RecordedEvent e, EventGroup group, String lane, String name, List<Arg> args) {
    return new JvmEvent.Instant(epochNanos(e.getStartTime()), lane(e.getThread(), lane), category(group),
        name, args, stack(e));
  }

  static String category(EventGroup group) {
    return "jvm." + group.configName();
  }

  /** JFR's time as nanoseconds since the epoch (exact: JFR converts its ticks to whole nanos). */
  static long epochNanos(Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
  }

  private static Lane lane(RecordedThread thread, String lane) {
    if (thread == null) {
      return new Lane(0, "", lane);
    }
    long tid = thread.getOSThreadId();
    String name = thread.getJavaName() != null ? thread.getJavaName() : thread.getOSName();
    return new Lane(Math.max(0, tid), bounded(name == null ? "" : name), lane);
  }

  /** The top frames, at most config.stackDepth(), "Class.method:line" each. */
  private List<String> stack(RecordedEvent e) {
    int depth = config.stackDepth();
    RecordedStackTrace trace = depth == 0 ? null : e.getStackTrace();
    if (trace == null) {
      return List.of();
    }
    List<RecordedFrame> frames = trace.getFrames();
    int n = Math.min(depth, frames.size());
    List<String> out = new ArrayList<>(n + 1);
    for (int i = 0; i < n; i++) {
      RecordedFrame f = frames.get(i);
      String m = method(f.getMethod());
      out.add(bounded(f.getLineNumber() > 0 ? m + ":" + f.getLineNumber() : m));
    }
    if (frames.size() > n || trace.isTruncated()) {
      out.add("...");
    }
    return out;
  }

  private static String method(RecordedMethod m) {
    if (m == null) {
      return "?";
    }
    RecordedClass type = m.getType();
    return bounded((type == null ? "?" : type.getName()) + "." + m.getName());
  }

  /** Args for the named fields the event has, in that order; others are left out. */
  private static List<Arg> args(RecordedEvent e, String... fields) {
    List<Arg> out = new ArrayList<>(fields.length);
    for (String f : fields) {
      if (!e.hasField(f)) {
        continue;
      }
      Object v = e.getValue(f);
      Object value = switch (v) {
        case null -> null;
        case Long l -> l;
        case Integer i -> (long) i;
        case Short s -> (long) s;
        case Byte b -> (long) b;
        case Character c -> (long) c;
        case Double d -> d;
        case Float x -> (double) x;
        case Boolean b -> b;
        case String s -> bounded(s);
        case RecordedClass c -> bounded(c.getName());
        case RecordedThread t -> bounded(t.getJavaName() != null ? t.getJavaName() : String.valueOf(t.getOSName()));
        case RecordedMethod m -> method(m);
        default -> bounded(String.valueOf(v));
      };
      if (value != null) {
        out.add(new Arg(f, value));
      }
    }
    return out;
  }

  private static long longField(RecordedEvent e, String field, long otherwise) {
    return e.hasField(field) ? e.getLong(field) : otherwise;
  }

  private static String string(RecordedEvent e, String field, String otherwise) {
    String s = e.hasField(field) ? e.getString(field) : null;
    return s == null ? otherwise : bounded(s);
  }

  static String bounded(String s) {
    return s.length() <= MAX_STRING ? s : s.substring(0, MAX_STRING - 3) + "...";
  }
}
