package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.ObserveEventsResponse;

/**
 * Observable events held for a consumer whose socket is behind, merged so that they cannot pile
 * up: a data source's latest state replaces the one it had (keyed by producer and data source
 * name, what the event names), "all data sources started" is said once, and the latest clone
 * trigger stands for the ones before it. Its size is bounded by the data sources of the
 * consumer's session, whatever the rate of changes.
 */
final class ObservedEventsBacklog {
  private record Key(String producer, String dataSource) {}

  private final Map<Key, ObservableEvents.DataSourceInstanceStateChange> states = new LinkedHashMap<>();
  private boolean allStarted;
  private ObservableEvents.CloneTriggerHit cloneTrigger;

  void add(ObservableEvents events) {
    for (ObservableEvents.DataSourceInstanceStateChange c : events.getInstanceStateChangesList()) {
      Key key = new Key(c.getProducerName(), c.getDataSourceName());
      states.remove(key); // the latest change goes last, in the order they happened
      states.put(key, c);
    }
    allStarted |= events.getAllDataSourcesStarted();
    if (events.hasCloneTriggerHit()) {
      cloneTrigger = events.getCloneTriggerHit();
    }
  }

  boolean isEmpty() {
    return states.isEmpty() && !allStarted && cloneTrigger == null;
  }

  int size() {
    return states.size() + (allStarted ? 1 : 0) + (cloneTrigger == null ? 0 : 1);
  }

  /**
   * Takes the oldest events that fit one ObserveEventsResponse of at most maxBytes out of the
   * backlog and encodes them (an empty backlog gives an empty response).
   */
  ByteString takeReply(int maxBytes) {
    ObservableEvents.Builder events = ObservableEvents.newBuilder();
    int size = 0;
    Iterator<ObservableEvents.DataSourceInstanceStateChange> it = states.values().iterator();
    while (it.hasNext()) {
      ObservableEvents.DataSourceInstanceStateChange c = it.next();
      int one = CodedOutputStream.computeMessageSize(
          ObservableEvents.INSTANCE_STATE_CHANGES_FIELD_NUMBER, c);
      if (size + one >= maxBytes && size > 0) {
        return reply(events); // the rest in the next reply
      }
      events.addInstanceStateChanges(c);
      size += one;
      it.remove();
    }
    if (cloneTrigger != null) {
      int one = CodedOutputStream.computeMessageSize(
          ObservableEvents.CLONE_TRIGGER_HIT_FIELD_NUMBER, cloneTrigger);
      if (size + one >= maxBytes && size > 0) {
        return reply(events);
      }
      events.setCloneTriggerHit(cloneTrigger);
      cloneTrigger = null;
    }
    if (allStarted) {
      events.setAllDataSourcesStarted(true);
      allStarted = false;
    }
    return reply(events);
  }

  private static ByteString reply(ObservableEvents.Builder events) {
    return ObserveEventsResponse.newBuilder().setEvents(events).build().toByteString();
  }
}
