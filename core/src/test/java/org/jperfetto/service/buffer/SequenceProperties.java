package org.jperfetto.service.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The sorted ring of a sequence's chunks against a TreeMap keyed by unsigned chunk id. */
class SequenceProperties {
  @Property(tries = 300)
  void staysSortedByUnsignedChunkId(
      @ForAll @Size(max = 300) List<@IntRange(min = 0, max = 99) Integer> ops,
      @ForAll @Size(min = 1, max = 300) List<Integer> ids) {
    Sequence seq = new Sequence(1, 1);
    TreeMap<Long, Integer> model = new TreeMap<>();
    int nextSlot = 0;
    int k = 0;
    for (int op : ops) {
      int id = ids.get(k++ % ids.size()) + (op < 30 ? k : 0);
      if (op < 70) {
        int pos = seq.find(id);
        if (pos >= 0) {
          assertEquals(true, model.containsKey(Integer.toUnsignedLong(id)));
          continue;
        }
        seq.insert(-pos - 1, id, nextSlot);
        model.put(Integer.toUnsignedLong(id), nextSlot++);
      } else if (seq.size() > 0) {
        int pos = op < 85 ? 0 : (op * 7919) % seq.size();
        long key = Integer.toUnsignedLong(seq.idAt(pos));
        seq.remove(pos);
        model.remove(key);
      }
      List<Long> keys = new ArrayList<>(model.keySet());
      assertEquals(keys.size(), seq.size());
      for (int i = 0; i < keys.size(); i++) {
        assertEquals((long) keys.get(i), Integer.toUnsignedLong(seq.idAt(i)));
        assertEquals(model.get(keys.get(i)), seq.slotAt(i));
        assertEquals(i, seq.find(seq.idAt(i)));
      }
    }
  }
}
