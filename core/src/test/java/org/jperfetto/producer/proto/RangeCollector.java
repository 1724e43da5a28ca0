package org.jperfetto.producer.proto;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/** A delegate that hands out fresh ranges of a fixed size and can concatenate what was written. */
final class RangeCollector implements ScatteredStreamWriter.Delegate {
  final int rangeSize;
  final List<MemorySegment> ranges = new ArrayList<>();
  final ScatteredStreamWriter stream = new ScatteredStreamWriter(this);
  final PatchList patches = new PatchList();
  final ProtoWriter writer = new ProtoWriter(stream, patches);
  private final List<Long> used = new ArrayList<>();

  RangeCollector(int rangeSize) {
    this.rangeSize = rangeSize;
  }

  @Override
  public void getNewBuffer(ScatteredStreamWriter w) {
    if (!ranges.isEmpty()) {
      used.add(w.writePtr());
    }
    MemorySegment range = MemorySegment.ofArray(new byte[rangeSize]);
    ranges.add(range);
    w.reset(range, 0, rangeSize);
  }

  /** All bytes written so far, in order (unused range tails skipped). */
  byte[] bytes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < ranges.size(); i++) {
      long end = i < used.size() ? used.get(i) : stream.writePtr();
      out.writeBytes(ranges.get(i).asSlice(0, end).toArray(ValueLayout.JAVA_BYTE));
    }
    return out.toByteArray();
  }
}
