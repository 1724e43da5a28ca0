package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.TracingServiceState;

/**
 * A QueryServiceState answer as replies that each fit a frame, encoded one at a time as they are
 * asked for: the state's single fields first, then its producers, data sources and sessions, as
 * many to a reply as fit. The client merges the replies (repeated fields append), as upstream's
 * client does. The state holds the registry's descriptors by reference, so an answer that waits
 * for the socket costs the snapshot's small wrappers, not a copy of the bytes.
 */
final class ServiceStateReplies implements Iterator<ByteString> {
  private static final int PRODUCERS = TracingServiceState.PRODUCERS_FIELD_NUMBER;
  private static final int DATA_SOURCES = TracingServiceState.DATA_SOURCES_FIELD_NUMBER;
  private static final int SESSIONS = TracingServiceState.TRACING_SESSIONS_FIELD_NUMBER;

  /** An entry of one of the state's repeated fields. */
  private record Entry(int field, MessageLite message) {}

  private final TracingServiceState head;
  private final List<Entry> entries = new ArrayList<>();
  private final int maxBytes;
  private int next;
  private boolean headSent;

  ServiceStateReplies(TracingServiceState state, int maxBytes) {
    this.head = state.toBuilder().clearProducers().clearDataSources().clearTracingSessions().build();
    state.getProducersList().forEach(p -> entries.add(new Entry(PRODUCERS, p)));
    state.getDataSourcesList().forEach(d -> entries.add(new Entry(DATA_SOURCES, d)));
    state.getTracingSessionsList().forEach(s -> entries.add(new Entry(SESSIONS, s)));
    this.maxBytes = maxBytes;
  }

  @Override
  public boolean hasNext() {
    return !headSent || next < entries.size();
  }

  @Override
  public ByteString next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    TracingServiceState.Builder reply = headSent ? TracingServiceState.newBuilder() : head.toBuilder();
    int size = headSent ? 0 : head.getSerializedSize();
    headSent = true;
    int from = next;
    while (next < entries.size()) {
      Entry e = entries.get(next);
      int one = CodedOutputStream.computeMessageSize(e.field(), e.message());
      if (size + one >= maxBytes && next > from) {
        break; // the next reply takes it (one entry alone fits: a frame brought its text)
      }
      size += one;
      next++;
      switch (e.field()) {
        case PRODUCERS -> reply.addProducers((TracingServiceState.Producer) e.message());
        case DATA_SOURCES -> reply.addDataSources((TracingServiceState.DataSource) e.message());
        default -> reply.addTracingSessions((TracingServiceState.TracingSession) e.message());
      }
    }
    return QueryServiceStateResponse.newBuilder().setServiceState(reply).build().toByteString();
  }
}
