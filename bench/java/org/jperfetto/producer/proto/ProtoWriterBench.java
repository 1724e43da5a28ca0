package org.jperfetto.producer.proto;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jperfetto.protos.DebugAnnotation;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TrackEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Writes slice-like TracePackets (timestamp, track_event with type and interned name, one debug
 * annotation with an int value) into 4 KiB chunks of an off-heap segment, as a TraceWriter would:
 * 4-byte fragment header compacted at the end. Run with -prof gc: the target is 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ProtoWriterBench implements ScatteredStreamWriter.Delegate {
  private static final int PACKET_TIMESTAMP = TracePacket.TIMESTAMP_FIELD_NUMBER;
  private static final int PACKET_TRACK_EVENT = TracePacket.TRACK_EVENT_FIELD_NUMBER;
  private static final int PACKET_SEQUENCE_FLAGS = TracePacket.SEQUENCE_FLAGS_FIELD_NUMBER;
  private static final int EVENT_TYPE = TrackEvent.TYPE_FIELD_NUMBER;
  private static final int EVENT_NAME_IID = TrackEvent.NAME_IID_FIELD_NUMBER;
  private static final int EVENT_DEBUG_ANNOTATIONS = TrackEvent.DEBUG_ANNOTATIONS_FIELD_NUMBER;
  private static final int ANNOTATION_NAME_IID = DebugAnnotation.NAME_IID_FIELD_NUMBER;
  private static final int ANNOTATION_INT_VALUE = DebugAnnotation.INT_VALUE_FIELD_NUMBER;
  private static final int TYPE_SLICE_BEGIN = TrackEvent.Type.TYPE_SLICE_BEGIN_VALUE;
  private static final int TYPE_SLICE_END = TrackEvent.Type.TYPE_SLICE_END_VALUE;
  private static final int SEQ_NEEDS_INCREMENTAL_STATE =
      TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE_VALUE;
  private static final int CHUNK = 4096;
  private static final int CHUNK_HEADER = 8;

  private Arena arena;
  private MemorySegment smb;
  private long nextChunk;
  private ScatteredStreamWriter stream;
  private ProtoWriter writer;
  private PacketFragment fragment;
  private long timestamp = 1_000_000_000L;
  private long i;
  private long packets;
  private long bytesBefore;

  @Setup(Level.Trial)
  public void setUp() {
    arena = Arena.ofShared();
    smb = arena.allocate(256 * 1024, 4096);
    stream = new ScatteredStreamWriter(this);
    writer = new ProtoWriter(stream, new PatchList());
    fragment = new PacketFragment(stream);
    encodedBegin = TracePacket.newBuilder()
        .setTimestamp(timestamp)
        .setTrackEvent(TrackEvent.newBuilder().setType(TrackEvent.Type.TYPE_SLICE_BEGIN).setNameIid(1)
            .addDebugAnnotations(DebugAnnotation.newBuilder().setNameIid(1).setIntValue(12345)))
        .setSequenceFlags(SEQ_NEEDS_INCREMENTAL_STATE)
        .build().toByteArray();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (packets > 0) {
      System.out.printf("%n[bytes per packet incl. header: %.2f]%n",
          (double) (stream.written() - bytesBefore) / packets);
    }
    arena.close();
  }

  @Override
  public void getNewBuffer(ScatteredStreamWriter w) {
    // Chunks are used round-robin; a packet never spans here (the slow path is tested elsewhere).
    long chunk = nextChunk;
    nextChunk = (nextChunk + CHUNK) % smb.byteSize();
    w.reset(smb, chunk + CHUNK_HEADER, chunk + CHUNK);
  }

  private void beginPacket() {
    if (stream.bytesAvailable() < 64) {
      stream.extend();
    }
    writer.endAllNested();
    fragment.begin();
  }

  private void endPacket() {
    writer.endAllNested();
    fragment.end();
    packets++;
  }

  /** One TRACE_EVENT begin with an int debug arg. */
  @Benchmark
  public long sliceBeginPacket() {
    beginPacket();
    writer.appendVarInt(PACKET_TIMESTAMP, timestamp += 1234);
    writer.beginNested(PACKET_TRACK_EVENT);
    writer.appendVarInt(EVENT_TYPE, TYPE_SLICE_BEGIN);
    writer.appendVarInt(EVENT_NAME_IID, 1);
    writer.beginNested(EVENT_DEBUG_ANNOTATIONS);
    writer.appendVarInt(ANNOTATION_NAME_IID, 1);
    writer.appendVarInt(ANNOTATION_INT_VALUE, i++);
    writer.endNested();
    writer.endNested();
    writer.appendVarInt(PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    endPacket();
    return stream.writePtr();
  }

  /** A whole slice: the begin packet above and its end packet. */
  @Benchmark
  public long slice() {
    sliceBeginPacket();
    beginPacket();
    writer.appendVarInt(PACKET_TIMESTAMP, timestamp += 567);
    writer.beginNested(PACKET_TRACK_EVENT);
    writer.appendVarInt(EVENT_TYPE, TYPE_SLICE_END);
    writer.endNested();
    writer.appendVarInt(PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    endPacket();
    return stream.writePtr();
  }

  private byte[] encodedBegin;

  /** Baseline: copying an already encoded begin packet (protobuf-java's bytes); no encoding at all. */
  @Benchmark
  public long baselineCopyEncodedPacket() {
    if (stream.bytesAvailable() < 64) {
      stream.extend();
    }
    stream.writeBytes(encodedBegin, 0, encodedBegin.length);
    return stream.writePtr();
  }

  /** A 40-char ASCII and a mixed-script string field, UTF-8 encoded in place. */
  @Benchmark
  public long stringPacket() {
    beginPacket();
    writer.appendString(1, "org.example.SomeService#handleRequest(42)");
    writer.appendString(2, "Grüße – 日本語 😀");
    endPacket();
    return stream.writePtr();
  }
}
