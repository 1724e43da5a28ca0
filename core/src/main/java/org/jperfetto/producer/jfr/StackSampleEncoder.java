package org.jperfetto.producer.jfr;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import org.jperfetto.producer.TraceWriter;
import org.jperfetto.producer.proto.ProtoWriter;
import org.jperfetto.protos.BuiltinClock;
import org.jperfetto.protos.Callstack;
import org.jperfetto.protos.Frame;
import org.jperfetto.protos.InternedData;
import org.jperfetto.protos.InternedString;
import org.jperfetto.protos.Mapping;
import org.jperfetto.protos.StackSample;
import org.jperfetto.protos.StackSampleDefaults;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TracePacketDefaults;

/**
 * Writes JFR's Java stack samples as {@code StackSample} packets (TracePacket field 135) whose
 * callstacks are interned on the sequence, so trace_processor (v58+) puts them in its stack_sample
 * table on the sampled thread and the UI draws them on that thread and as a flame graph of a range.
 *
 * <p>What goes out, per sequence state:
 * <ul>
 *   <li>first a packet with SEQ_INCREMENTAL_STATE_CLEARED whose trace_packet_defaults name the
 *       profiler ({@code stack_sample_defaults.source = "jvm.jfr"}) and its timebase (wall or CPU
 *       time, nanoseconds);
 *   <li>for each thread seen, its thread track's descriptor (pid, tid, name; see {@link
 *       JvmTrackEncoder#describeThread}), so the samples' thread has its Java name even when nothing
 *       else in the trace names it;
 *   <li>per sample: timestamp on CLOCK_MONOTONIC, SEQ_NEEDS_INCREMENTAL_STATE, the interned entries
 *       it is the first to use (function names, mapping paths, mappings, frames, callstacks), and
 *       the stack_sample with the thread (pid, tid) and the callstack iid.
 * </ul>
 * A frame is a Java method: function name "fully.qualified.Class.method" as JFR names it (hidden
 * classes and lambda forms included), the line number where JFR has one, the bytecode index as its
 * pc, the frame's kind (interpreted, JIT, inlined, native) and a mapping per module (its name), or
 * per class loader for classes outside named modules ("app", "platform", "boot"). Callstacks are
 * root first; a stack cut at the depth, or one JFR itself truncated, starts with a "[truncated]"
 * frame.
 *
 * <p>Steady state allocates nothing, and a clear of the incremental state (jtraced's ring-buffer
 * sessions clear every second) costs no work on JFR's objects. What a stack is made of is resolved
 * once per RecordedStackTrace (JFR keeps one per distinct stack in a recording chunk): its frames'
 * names, mappings, line and kind become entries that outlive the sequence state, shared by every
 * stack with the same frame and found from the RecordedMethod without building a string again. A
 * stack JFR hands over again is one identity lookup to its entry; an entry stamped with the current
 * state has its iid, one that is not (the state started afresh) is interned again from what it
 * holds. The state starts afresh when the writer changes, the instance's incremental state is
 * cleared, the writer lost packets (and the next one may land), or {@link #MAX_INTERNED_CALLSTACKS}
 * callstacks were interned; the resolved entries are forgotten only past {@link #MAX_RESOLVED}.
 *
 * <p>One encoder per sequence, used by one thread (the recording stream's).
 */
public final class StackSampleEncoder {
  /** The profiler name samples carry (StackSampleDefaults.source): the data source's name. */
  public static final String SOURCE = JfrDataSource.NAME;
  /**
   * Name of the leaf frame added to a native method sample whose innermost Java frame is not a
   * native method (e.g. an FFM downcall's stub): the thread is in native code below it.
   */
  public static final String NATIVE_FRAME = "[native code]";
  /** Name of the root frame of a callstack missing its outer frames. */
  public static final String TRUNCATED_FRAME = "[truncated]";
  /** Distinct RecordedStackTrace objects remembered by identity before the cache starts over. */
  static final int MAX_REMEMBERED_STACKS = 1 << 12;
  /**
   * Callstacks interned on one sequence state before it starts afresh: bounds the tables (and the
   * reader's) in a long session without incremental state clears.
   */
  static final int MAX_INTERNED_CALLSTACKS = 1 << 16;
  /** Distinct methods, frames or stacks resolved from JFR before those entries are all forgotten. */
  static final int MAX_RESOLVED = 1 << 16;

  private static final int CLOCK_MONOTONIC = BuiltinClock.BUILTIN_CLOCK_MONOTONIC_VALUE;
  private static final int CLEARED = TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED_VALUE;
  private static final int NEEDS = TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;

  private final int pid;
  private final JvmTrackEncoder tracks;
  private final int depth;
  private final String timebase;

  // The sequence state this encoder's iids belong to, numbered by state (0: none yet).
  private TraceWriter writer;
  private int generation;
  private long state;
  private long nextIid;
  private int callstacksInState;
  private final IdentityHashMap<RecordedThread, Boolean> threadsSeen = new IdentityHashMap<>();

  // What JFR's stacks are made of, kept across sequence states.
  private final IdentityHashMap<RecordedStackTrace, ResolvedStack> stacksSeen = new IdentityHashMap<>();
  private final IdentityHashMap<RecordedStackTrace, ResolvedStack> nativeStacksSeen = new IdentityHashMap<>();
  private final IdentityHashMap<RecordedMethod, MethodNames> methods = new IdentityHashMap<>();
  private final Map<FrameKey, ResolvedFrame> frames = new HashMap<>();
  private final Map<StackKey, ResolvedStack> stacks = new HashMap<>();
  private final Map<String, InternedName> functionNames = new HashMap<>();
  private final Map<String, InternedName> mappings = new HashMap<>();
  private final ResolvedFrame[] scratch = new ResolvedFrame[JfrConfig.MAX_STACK_DEPTH + 2];

  // Entries the next packet is the first to use in this state.
  private final List<InternedName> newFunctionNames = new ArrayList<>();
  private final List<InternedName> newMappings = new ArrayList<>();
  private final List<ResolvedFrame> newFrames = new ArrayList<>();
  private final List<ResolvedStack> newCallstacks = new ArrayList<>();

  private long samples;
  private long stackHits;
  private long framesResolved;

  /**
   * An encoder for samples of process pid, keeping at most depth frames (the leaf's end), whose
   * timebase is CPU time (cpuTime) or wall-clock time.
   */
  public StackSampleEncoder(int pid, int depth, boolean cpuTime) {
    this(pid, depth, cpuTime, new JvmTrackEncoder(pid));
  }

  /**
   * As {@link #StackSampleEncoder(int, int, boolean)}, describing sampled threads through tracks
   * (the encoder of the JVM's other events on the same sequence), so that each thread has one
   * track however many data sources describe it.
   */
  StackSampleEncoder(int pid, int depth, boolean cpuTime, JvmTrackEncoder tracks) {
    this.tracks = tracks;
    if (depth < 1) {
      throw new IllegalArgumentException("stack sample depth " + depth + " < 1");
    }
    this.pid = pid;
    this.depth = depth;
    this.timebase = cpuTime ? "cpu-time" : "wall-time";
  }

  /**
   * Writes one sample taken at traceNanos (CLOCK_MONOTONIC) on thread, with stack (JFR's, leaf
   * first), into writer, whose instance is at incremental state generation; inNative: JFR's native
   * method sampler took it (the thread is in native code, see {@link #NATIVE_FRAME}). A sample
   * without a thread with an OS tid or without a stack is skipped; returns whether it was written.
   */
  public boolean write(long traceNanos, RecordedThread thread, RecordedStackTrace stack, boolean inNative,
      TraceWriter w, int generationNow) {
    if (thread == null || stack == null || thread.getOSThreadId() <= 0) {
      return false;
    }
    ensureState(w, generationNow, traceNanos);
    long tid = thread.getOSThreadId();
    if (!threadsSeen.containsKey(thread)) {
      describeThread(thread, tid);
    }
    long callstack = callstackIid(stack, inNative);

    ProtoWriter p = w.newTracePacket();
    p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, traceNanos);
    p.appendVarInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_MONOTONIC);
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, NEEDS);
    writeInterned(p);
    p.beginNested(TracePacket.STACK_SAMPLE_FIELD_NUMBER);
    p.beginNested(StackSample.TASK_CONTEXT_FIELD_NUMBER);
    p.appendVarInt(StackSample.TaskContext.PID_FIELD_NUMBER, pid);
    p.appendVarInt(StackSample.TaskContext.TID_FIELD_NUMBER, tid);
    p.endNested();
    p.appendVarInt(StackSample.CALLSTACK_IID_FIELD_NUMBER, callstack);
    p.endNested();
    samples++;
    return true;
  }

  /**
   * The iid of stack for another packet about to be written into w at traceNanos (an event with a
   * stack, e.g. an allocation sample): interned now, with the state started afresh first if needed.
   * That packet must then carry {@link #writeInterned} and SEQ_NEEDS_INCREMENTAL_STATE.
   */
  public long callstack(RecordedStackTrace stack, long traceNanos, TraceWriter w, int generationNow) {
    ensureState(w, generationNow, traceNanos);
    return callstackIid(stack, false);
  }

  /** Writes into packet p the interned entries interned since the last packet that carried them. */
  public void writeInterned(ProtoWriter p) {
    if (!newCallstacks.isEmpty()) {
      writeInternedData(p);
    }
  }

  private void ensureState(TraceWriter w, int generationNow, long traceNanos) {
    if (w != writer || generationNow != generation || (w.lossUnacknowledged() && w.nextPacketMayLand())
        || callstacksInState >= MAX_INTERNED_CALLSTACKS) {
      reset(w, generationNow, traceNanos);
    }
  }

  /** Samples written. */
  public long samples() {
    return samples;
  }

  /** Stacks (of samples and of other events) found by identity: JFR's frames not read again. */
  public long stackHits() {
    return stackHits;
  }

  /** JFR frames read and resolved (new stacks only: a cleared state re-interns, it does not re-read). */
  public long framesResolved() {
    return framesResolved;
  }

  /** Callstacks interned in the current sequence state. */
  public int callstacksInterned() {
    return callstacksInState;
  }

  /** Times the sequence state started afresh (the first sample's included). */
  public long resets() {
    return state;
  }

  private void reset(TraceWriter w, int generationNow, long traceNanos) {
    boolean afterLoss = w == writer && w.lossUnacknowledged();
    writer = w;
    generation = generationNow;
    state++; // every entry's iid stamped with an earlier state is stale from now on
    nextIid = 0;
    callstacksInState = 0;
    threadsSeen.clear();
    tracks.clearIncrementalState(); // descriptors again too: they may have been in what was lost
    newFunctionNames.clear();
    newMappings.clear();
    newFrames.clear();
    newCallstacks.clear();

    ProtoWriter p = w.newTracePacket();
    p.appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, traceNanos);
    p.appendVarInt(TracePacket.TIMESTAMP_CLOCK_ID_FIELD_NUMBER, CLOCK_MONOTONIC);
    p.appendVarInt(TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER, CLEARED);
    p.beginNested(TracePacket.TRACE_PACKET_DEFAULTS_FIELD_NUMBER);
    p.beginNested(TracePacketDefaults.STACK_SAMPLE_DEFAULTS_FIELD_NUMBER);
    p.appendString(StackSampleDefaults.SOURCE_FIELD_NUMBER, SOURCE);
    p.beginNested(StackSampleDefaults.PRIMARY_DESCRIPTOR_FIELD_NUMBER);
    p.appendString(StackSample.CounterDescriptor.NAME_FIELD_NUMBER, timebase);
    p.appendVarInt(StackSample.CounterDescriptor.UNIT_FIELD_NUMBER, StackSample.Unit.UNIT_NANOSECONDS_VALUE);
    p.endNested();
    p.endNested();
    p.endNested();
    if (afterLoss) {
      w.acknowledgeLoss();
    }
  }

  private void describeThread(RecordedThread thread, long tid) {
    if (threadsSeen.size() >= MAX_REMEMBERED_STACKS) {
      threadsSeen.clear();
    }
    threadsSeen.put(thread, Boolean.TRUE);
    String name = thread.getJavaName() != null ? thread.getJavaName() : thread.getOSName();
    tracks.describeThread(writer::newTracePacket, tid, name == null ? null : JfrEventMapper.bounded(name));
  }

  private long callstackIid(RecordedStackTrace stack, boolean inNative) {
    IdentityHashMap<RecordedStackTrace, ResolvedStack> seen = inNative ? nativeStacksSeen : stacksSeen;
    ResolvedStack resolved = seen.get(stack);
    if (resolved != null) {
      stackHits++;
    } else {
      resolved = resolve(stack, inNative);
      if (seen.size() >= MAX_REMEMBERED_STACKS) {
        seen.clear();
      }
      seen.put(stack, resolved);
    }
    if (resolved.state != state) {
      intern(resolved);
    }
    return resolved.iid;
  }

  // ---- resolving JFR's stacks (new stacks only) ----

  /** What stack is made of, root first, as the entry shared by every stack with those frames. */
  private ResolvedStack resolve(RecordedStackTrace stack, boolean inNative) {
    if (methods.size() >= MAX_RESOLVED || frames.size() >= MAX_RESOLVED || stacks.size() >= MAX_RESOLVED) {
      forgetResolved();
    }
    List<RecordedFrame> jfrFrames = stack.getFrames();
    int kept = Math.min(depth, jfrFrames.size());
    boolean truncated = jfrFrames.size() > kept || stack.isTruncated();
    int n = 0;
    if (truncated) {
      scratch[n++] = marker(TRUNCATED_FRAME, FrameKind.UNKNOWN);
    }
    for (int i = kept - 1; i >= 0; i--) {
      scratch[n++] = frame(jfrFrames.get(i));
    }
    if (inNative && (kept == 0 || FrameKind.of(jfrFrames.get(0).getType()) != FrameKind.NATIVE)) {
      scratch[n++] = marker(NATIVE_FRAME, FrameKind.NATIVE);
    }
    framesResolved += kept;
    return stacks.computeIfAbsent(new StackKey(Arrays.copyOf(scratch, n)), k -> new ResolvedStack(k.frames()));
  }

  /** Drops every resolved entry (entries of the current state still referred to keep their iids). */
  private void forgetResolved() {
    stacksSeen.clear();
    nativeStacksSeen.clear();
    methods.clear();
    frames.clear();
    stacks.clear();
    functionNames.clear();
    mappings.clear();
  }

  private ResolvedFrame frame(RecordedFrame f) {
    RecordedMethod m = f.getMethod();
    MethodNames names = m == null ? null : methods.get(m);
    if (names == null) {
      names = methodNames(m);
      if (m != null) {
        methods.put(m, names);
      }
    }
    return frame(new FrameKey(names.function(), names.mapping(), Math.max(0, f.getBytecodeIndex()),
        Math.max(0, f.getLineNumber()), FrameKind.of(f.getType())));
  }

  private ResolvedFrame marker(String function, FrameKind kind) {
    return frame(new FrameKey(name(functionNames, function), null, 0, 0, kind));
  }

  private ResolvedFrame frame(FrameKey key) {
    return frames.computeIfAbsent(key, ResolvedFrame::new);
  }

  /** A method's function name ("fully.qualified.Class.method") and mapping, built once per RecordedMethod. */
  private MethodNames methodNames(RecordedMethod m) {
    RecordedClass type = m == null ? null : m.getType();
    String function = JfrEventMapper.bounded(
        (type == null ? "?" : type.getName()) + "." + (m == null ? "?" : m.getName()));
    String mapping = mappingName(type);
    return new MethodNames(name(functionNames, function), mapping == null ? null : name(mappings, mapping));
  }

  private static InternedName name(Map<String, InternedName> table, String value) {
    return table.computeIfAbsent(value, InternedName::new);
  }

  // ---- interning into the current sequence state ----

  /** Gives stack, and the frames and names it is the first to use in this state, their iids. */
  private void intern(ResolvedStack stack) {
    for (ResolvedFrame f : stack.frames) {
      if (f.state != state) {
        intern(f.function, newFunctionNames);
        if (f.mapping != null) {
          // The mapping and its one path string share an iid (different interning tables).
          intern(f.mapping, newMappings);
        }
        f.iid = ++nextIid;
        f.state = state;
        newFrames.add(f);
      }
    }
    stack.iid = ++nextIid;
    stack.state = state;
    newCallstacks.add(stack);
    callstacksInState++;
  }

  private void intern(InternedName name, List<InternedName> fresh) {
    if (name.state != state) {
      name.iid = ++nextIid;
      name.state = state;
      fresh.add(name);
    }
  }

  private void writeInternedData(ProtoWriter p) {
    p.beginNested(TracePacket.INTERNED_DATA_FIELD_NUMBER);
    for (InternedName s : newFunctionNames) {
      internedString(p, InternedData.FUNCTION_NAMES_FIELD_NUMBER, s);
    }
    for (InternedName s : newMappings) {
      internedString(p, InternedData.MAPPING_PATHS_FIELD_NUMBER, s);
    }
    for (InternedName s : newMappings) {
      p.beginNested(InternedData.MAPPINGS_FIELD_NUMBER);
      p.appendVarInt(Mapping.IID_FIELD_NUMBER, s.iid);
      p.appendVarInt(Mapping.PATH_STRING_IDS_FIELD_NUMBER, s.iid);
      p.endNested();
    }
    for (ResolvedFrame f : newFrames) {
      p.beginNested(InternedData.FRAMES_FIELD_NUMBER);
      p.appendVarInt(Frame.IID_FIELD_NUMBER, f.iid);
      p.appendVarInt(Frame.FUNCTION_NAME_ID_FIELD_NUMBER, f.function.iid);
      if (f.mapping != null) {
        p.appendVarInt(Frame.MAPPING_ID_FIELD_NUMBER, f.mapping.iid);
        p.appendVarInt(Frame.REL_PC_FIELD_NUMBER, f.bci);
      }
      if (f.line > 0) {
        p.appendVarInt(Frame.LINE_NUMBER_FIELD_NUMBER, f.line);
      }
      f.kind.write(p);
      p.endNested();
    }
    for (ResolvedStack c : newCallstacks) {
      p.beginNested(InternedData.CALLSTACKS_FIELD_NUMBER);
      p.appendVarInt(Callstack.IID_FIELD_NUMBER, c.iid);
      for (ResolvedFrame frame : c.frames) {
        p.appendVarInt(Callstack.FRAME_IDS_FIELD_NUMBER, frame.iid);
      }
      p.endNested();
    }
    p.endNested();
    newFunctionNames.clear();
    newMappings.clear();
    newFrames.clear();
    newCallstacks.clear();
  }

  private static void internedString(ProtoWriter p, int field, InternedName s) {
    p.beginNested(field);
    p.appendVarInt(InternedString.IID_FIELD_NUMBER, s.iid);
    p.appendString(InternedString.STR_FIELD_NUMBER, s.value);
    p.endNested();
  }

  /**
   * The mapping a class's frames go in: its named module, else its class loader's name ("app",
   * "platform"), else "boot" for the bootstrap loader; null when JFR says nothing of the class.
   */
  static String mappingName(RecordedClass type) {
    if (type == null) {
      return null;
    }
    RecordedObject pkg = objectField(type, "package");
    RecordedObject module = pkg == null ? null : objectField(pkg, "module");
    if (module != null && module.hasField("name")) {
      String name = module.getString("name");
      if (name != null && !name.isEmpty()) {
        return name;
      }
    }
    RecordedObject loader = objectField(type, "classLoader");
    if (loader == null) {
      return "boot";
    }
    String name = loader.hasField("name") ? loader.getString("name") : null;
    if (name != null && !name.isEmpty()) {
      return name;
    }
    RecordedObject loaderType = objectField(loader, "type");
    return loaderType instanceof RecordedClass c ? c.getName() : "boot";
  }

  private static RecordedObject objectField(RecordedObject o, String field) {
    return o.hasField(field) && o.getValue(field) instanceof RecordedObject r ? r : null;
  }

  /** JFR's frame types ("Interpreted", "JIT compiled", "Inlined", "Native") as a Frame's kind. */
  enum FrameKind {
    INTERPRETED(Frame.Kind.KIND_INTERPRETED_VALUE, null),
    JIT(Frame.Kind.KIND_JIT_VALUE, null),
    /** JIT code inlined into its caller: no well-known kind says so, so a label. */
    INLINED(0, "inlined"),
    NATIVE(Frame.Kind.KIND_NATIVE_VALUE, null),
    UNKNOWN(0, null);

    private final int kind;
    private final String label;

    FrameKind(int kind, String label) {
      this.kind = kind;
      this.label = label;
    }

    static FrameKind of(String jfrType) {
      if (jfrType == null) {
        return UNKNOWN;
      }
      return switch (jfrType) {
        case "Interpreted" -> INTERPRETED;
        case "JIT compiled", "C1 compiled", "C2 compiled" -> JIT;
        case "Inlined" -> INLINED;
        case "Native" -> NATIVE;
        default -> UNKNOWN;
      };
    }

    void write(ProtoWriter p) {
      if (kind != 0) {
        p.appendVarInt(Frame.KIND_FIELD_NUMBER, kind);
      } else if (label != null) {
        p.appendString(Frame.KIND_STR_FIELD_NUMBER, label);
      }
    }
  }

  /** A function name or mapping, and its iid in the state it was last interned in. */
  private static final class InternedName {
    final String value;
    long iid;
    long state;

    InternedName(String value) {
      this.value = value;
    }
  }

  /** A method's names, from its RecordedMethod. */
  private record MethodNames(InternedName function, InternedName mapping) {}

  /** A frame by content; names compare by identity (one InternedName per string). */
  private record FrameKey(InternedName function, InternedName mapping, int bci, int line, FrameKind kind) {}

  /** One distinct frame, and its iid in the state it was last interned in. */
  private static final class ResolvedFrame {
    final InternedName function;
    final InternedName mapping;
    final int bci;
    final int line;
    final FrameKind kind;
    long iid;
    long state;

    ResolvedFrame(FrameKey key) {
      this.function = key.function();
      this.mapping = key.mapping();
      this.bci = key.bci();
      this.line = key.line();
      this.kind = key.kind();
    }
  }

  /** A stack by its frames (root first, compared by identity). */
  private record StackKey(ResolvedFrame[] frames) {
    @Override
    public boolean equals(Object o) {
      return o instanceof StackKey k && Arrays.equals(k.frames, frames);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(frames);
    }
  }

  /** One distinct callstack, and its iid in the state it was last interned in. */
  private static final class ResolvedStack {
    final ResolvedFrame[] frames;
    long iid;
    long state;

    ResolvedStack(ResolvedFrame[] frames) {
      this.frames = frames;
    }
  }
}
