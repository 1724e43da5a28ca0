package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/** The interning and track tables against java.util maps. */
class InternTableProperties {
  @Property(tries = 200)
  void internTableGivesDenseIdsInFirstUseOrder(@ForAll @Size(max = 300) List<String> values) {
    InternTable table = new InternTable();
    Map<String, Integer> model = new HashMap<>();
    for (String v : values) {
      int found = table.find(new String(v)); // equal, not identical
      assertEquals(model.getOrDefault(v, 0), found);
      if (found == 0) {
        int iid = table.add(v);
        assertEquals(model.size() + 1, iid);
        model.put(v, iid);
      }
    }
    assertEquals(model.size(), table.size());
    table.clear();
    for (String v : model.keySet()) {
      assertEquals(0, table.find(v));
    }
  }

  /** The same String objects asked for again and again (a trace point in a loop), across clears. */
  @Property(tries = 200)
  void repeatedLookupsOfTheSameObjectAgreeWithTheModelAcrossClears(
      @ForAll @Size(max = 100) List<String> values) {
    InternTable table = new InternTable();
    Map<String, Integer> model = new HashMap<>();
    for (int round = 0; round < 2; round++) {
      for (String v : values) {
        for (int k = 0; k < 2; k++) {
          int found = table.find(v);
          assertEquals(model.getOrDefault(v, 0), found);
          if (found == 0) {
            model.put(v, table.add(v));
          }
        }
      }
      table.clear();
      model.clear();
      if (!values.isEmpty()) {
        assertEquals(0, table.find(values.get(values.size() - 1)), "forgotten after clear");
      }
    }
  }

  @Property(tries = 200)
  void uuidSetIsASet(@ForAll @Size(max = 300) List<Long> values) {
    UuidSet set = new UuidSet();
    Set<Long> model = new HashSet<>();
    for (long v : values) {
      if (v == 0) {
        continue;
      }
      assertEquals(model.add(v), set.add(v));
      assertTrue(set.contains(v));
    }
    assertEquals(model.size(), set.size());
    set.clear();
    for (long v : model) {
      assertFalse(set.contains(v));
    }
  }
}
