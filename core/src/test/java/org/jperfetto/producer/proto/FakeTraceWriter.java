package org.jperfetto.producer.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * A test stand-in for the producer's TraceWriter: hands the stream chunks of chosen sizes, writes
 * packet fragments with their size headers and continuation flags, moves open size fields into
 * patches when a chunk is handed back, and "sends" patched entries as the real one does. Then
 * {@link #reassemble} plays the service: applies the patches and glues fragments into packets.
 */
final class FakeTraceWriter implements ScatteredStreamWriter.Delegate {
  static final int FIRST_CONTINUES_FROM_PREV = 1;
  static final int LAST_CONTINUES_ON_NEXT = 2;
  static final int NEEDS_PATCHING = 4;
  private static final int HEADER = Varints.REDUNDANT_SIZE;

  static final class Chunk {
    final int id;
    final MemorySegment payload;
    int packets;
    int flags;

    Chunk(int id, int size) {
      this.id = id;
      this.payload = MemorySegment.ofArray(new byte[size]);
    }
  }

  record SentPatch(int chunkId, int offset, int sizeField) {}

  /** A fragment as {@link #reassemble} found it: its size and how many bytes its size header took. */
  record Fragment(int chunkId, long size, int headerBytes) {}

  final List<Chunk> chunks = new ArrayList<>();
  final List<SentPatch> sent = new ArrayList<>();
  final List<Fragment> fragments = new ArrayList<>();
  final ScatteredStreamWriter stream = new ScatteredStreamWriter(this);
  final PatchList patches = new PatchList(2);
  final ProtoWriter writer = new ProtoWriter(stream, patches);
  /** Whether each packet begun was lost because no chunk was free. */
  final List<Boolean> dropped = new ArrayList<>();
  private final IntSupplier chunkSizes;
  private final BooleanSupplier chunkFree;
  private final MemorySegment garbage = MemorySegment.ofArray(new byte[1024]);
  private Chunk current;
  final PacketFragment fragment = new PacketFragment(stream);
  private boolean fragmenting;
  private boolean dropping;

  /** chunkSizes gives each new chunk's payload size (at least 16 bytes). */
  FakeTraceWriter(IntSupplier chunkSizes) {
    this(chunkSizes, () -> true);
  }

  /** chunkFree says whether the SMB has a chunk to give when one is asked for. */
  FakeTraceWriter(IntSupplier chunkSizes, BooleanSupplier chunkFree) {
    this.chunkSizes = chunkSizes;
    this.chunkFree = chunkFree;
  }

  ProtoWriter beginPacket() {
    fragmenting = false;
    if (dropping || stream.bytesAvailable() < HEADER + 8) {
      stream.extend(); // while dropping, every new packet tries for a chunk again
    }
    writer.endAllNested();
    fragment.begin();
    fragmenting = true;
    dropped.add(dropping);
    if (!dropping) {
      current.packets++;
    }
    return writer;
  }

  void endPacket() {
    writer.endAllNested();
    if (fragment.isOpen()) {
      fragment.end();
    }
    fragmenting = false;
    sendPatchedFront();
  }

  @Override
  public void getNewBuffer(ScatteredStreamWriter w) {
    if (fragmenting && dropping) {
      w.reset(garbage, 0, garbage.byteSize()); // the rest of a lost packet goes round the garbage
      return;
    }
    if (!chunkFree.getAsBoolean()) {
      if (fragmenting && current != null) {
        // The packet is lost: mark its fragment so the service drops it, and its open sizes in this
        // chunk are written nowhere (those already in patches are still filled and sent).
        fragment.endAsDropped();
        writer.discardSizeFields(current.payload, 0, current.payload.byteSize());
        dropped.set(dropped.size() - 1, true);
      }
      sendPatchedFront();
      current = null;
      dropping = true;
      w.reset(garbage, 0, garbage.byteSize());
      return;
    }
    dropping = false;
    if (current != null && fragmenting) {
      current.flags |= LAST_CONTINUES_ON_NEXT;
      fragment.endAtChunkBoundary();
      if (writer.redirectSizeFields(current.payload, 0, current.payload.byteSize(), current.id) > 0) {
        current.flags |= NEEDS_PATCHING;
      }
    }
    sendPatchedFront(); // the real writer hands patched entries back with the chunk
    current = new Chunk(chunks.size() + 1, chunkSizes.getAsInt());
    chunks.add(current);
    if (fragmenting) {
      current.packets = 1;
      current.flags = FIRST_CONTINUES_FROM_PREV;
      w.reset(current.payload, HEADER, current.payload.byteSize());
      fragment.beginContinuation(current.payload, 0);
    } else {
      w.reset(current.payload, 0, current.payload.byteSize());
    }
  }

  private void sendPatchedFront() {
    while (patches.frontIsPatched()) {
      sent.add(new SentPatch(patches.frontChunkId(), patches.frontOffset(), patches.frontSizeField()));
      patches.popFront();
    }
  }

  /** Patches the chunks and glues fragments into whole packets, as the service would. */
  List<byte[]> reassemble() {
    assertTrue(patches.isEmpty(), "patches never filled: " + patches.size());
    for (SentPatch p : sent) {
      Chunk c = chunks.get(p.chunkId() - 1);
      assertTrue((c.flags & NEEDS_PATCHING) != 0, "patched chunk lacks needs-patching: " + p);
      c.payload.set(ProtoWire.INT_LE, p.offset(), p.sizeField());
    }
    List<byte[]> packets = new ArrayList<>();
    ByteArrayOutputStream pending = null;
    for (Chunk c : chunks) {
      long p = 0;
      for (int k = 0; k < c.packets; k++) {
        long size = 0;
        int shift = 0;
        int b;
        int n = 0;
        do {
          b = c.payload.get(ValueLayout.JAVA_BYTE, p++) & 0xFF;
          size |= (long) (b & 0x7F) << shift;
          shift += 7;
          n++;
        } while ((b & 0x80) != 0 && n < HEADER);
        assertEquals(0, b & 0x80, "fragment size longer than 4 bytes in chunk " + c.id);
        if (size == Varints.MAX_REDUNDANT) {
          assertEquals(c.packets - 1, k, "drop marker not last in chunk " + c.id);
          pending = null; // the service throws the whole packet away
          break;
        }
        fragments.add(new Fragment(c.id, size, n));
        byte[] data = c.payload.asSlice(p, size).toArray(ValueLayout.JAVA_BYTE);
        p += size;
        boolean continues = k == 0 && (c.flags & FIRST_CONTINUES_FROM_PREV) != 0;
        if (continues) {
          assertTrue(pending != null, "continuation without a start in chunk " + c.id);
        } else {
          assertEquals(null, pending, "packet left open before chunk " + c.id);
          pending = new ByteArrayOutputStream();
        }
        pending.writeBytes(data);
        if (!(k == c.packets - 1 && (c.flags & LAST_CONTINUES_ON_NEXT) != 0)) {
          packets.add(pending.toByteArray());
          pending = null;
        }
      }
    }
    assertEquals(null, pending, "last packet never ended");
    return packets;
  }
}
