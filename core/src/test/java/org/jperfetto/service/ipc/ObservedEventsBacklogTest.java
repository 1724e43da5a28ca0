package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsResponse;
import org.junit.jupiter.api.Test;

class ObservedEventsBacklogTest {
  private static ObservableEvents change(String ds, ObservableEvents.DataSourceInstanceState state) {
    return ObservableEvents.newBuilder().addInstanceStateChanges(ObservableEvents.DataSourceInstanceStateChange
        .newBuilder().setProducerName("p").setDataSourceName(ds).setState(state)).build();
  }

  private static List<ObservableEvents> takeAll(ObservedEventsBacklog b, int maxBytes) throws Exception {
    List<ObservableEvents> out = new ArrayList<>();
    while (!b.isEmpty()) {
      ByteString reply = b.takeReply(maxBytes);
      assertTrue(reply.size() <= maxBytes + 8, "reply of " + reply.size() + " bytes");
      out.add(ObserveEventsResponse.parseFrom(reply).getEvents());
    }
    return out;
  }

  @Test
  void aDataSourceKeepsItsLatestStateWhateverTheNumberOfChanges() throws Exception {
    ObservedEventsBacklog b = new ObservedEventsBacklog();
    for (int i = 0; i < 10_000; i++) {
      b.add(change("a", i % 2 == 0 ? ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED
          : ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED));
      b.add(change("b", ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED));
    }
    b.add(ObservableEvents.newBuilder().setAllDataSourcesStarted(true).build());
    b.add(ObservableEvents.newBuilder().setCloneTriggerHit(
        ObservableEvents.CloneTriggerHit.newBuilder().setTriggerName("t1")).build());
    b.add(ObservableEvents.newBuilder().setCloneTriggerHit(
        ObservableEvents.CloneTriggerHit.newBuilder().setTriggerName("t2")).build());
    assertEquals(4, b.size(), "two data sources, started once, the latest trigger");
    List<ObservableEvents> got = takeAll(b, 1 << 16);
    assertEquals(1, got.size());
    ObservableEvents e = got.get(0);
    assertEquals(List.of("a", "b"), e.getInstanceStateChangesList().stream()
        .map(ObservableEvents.DataSourceInstanceStateChange::getDataSourceName).toList(),
        "in the order of their latest change");
    assertEquals(ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED,
        e.getInstanceStateChanges(0).getState());
    assertTrue(e.getAllDataSourcesStarted());
    assertEquals("t2", e.getCloneTriggerHit().getTriggerName());
    assertTrue(b.isEmpty());
  }

  @Test
  void manyChangesAreSplitIntoRepliesOfTheGivenSize() throws Exception {
    ObservedEventsBacklog b = new ObservedEventsBacklog();
    int n = 3000;
    for (int i = 0; i < n; i++) {
      b.add(change("ds." + i + ".".repeat(100),
          ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED));
    }
    List<ObservableEvents> got = takeAll(b, 16 * 1024);
    assertTrue(got.size() > 1);
    int i = 0;
    for (ObservableEvents e : got) {
      for (var c : e.getInstanceStateChangesList()) {
        assertTrue(c.getDataSourceName().startsWith("ds." + i + "."), c.getDataSourceName());
        i++;
      }
    }
    assertEquals(n, i);
    assertFalse(got.getLast().getAllDataSourcesStarted());
  }
}
