package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.QueryServiceStateResponse;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.Test;

class ServiceStateRepliesTest {
  @Test
  void theRepliesFitTheBoundAndMergeBackIntoTheState() throws Exception {
    TracingServiceState.Builder st = TracingServiceState.newBuilder().setNumSessions(2).setTracingServiceVersion("v");
    for (int i = 0; i < 40; i++) {
      st.addProducers(TracingServiceState.Producer.newBuilder().setId(i).setName("producer" + i + "p".repeat(3000)));
    }
    for (int i = 0; i < 300; i++) {
      st.addDataSources(TracingServiceState.DataSource.newBuilder().setProducerId(i % 40)
          .setDsDescriptor(DataSourceDescriptor.newBuilder().setName("ds" + i + "d".repeat(1000))));
    }
    for (int i = 0; i < 15; i++) {
      st.addTracingSessions(TracingServiceState.TracingSession.newBuilder().setId(i)
          .setUniqueSessionName("s" + i + "n".repeat(20_000)));
    }
    TracingServiceState state = st.build();
    int max = 32 * 1024;
    TracingServiceState.Builder merged = TracingServiceState.newBuilder();
    int replies = 0;
    for (ServiceStateReplies r = new ServiceStateReplies(state, max); r.hasNext(); replies++) {
      ByteString reply = r.next();
      assertTrue(reply.size() <= max + 8, "reply of " + reply.size() + " bytes");
      merged.mergeFrom(QueryServiceStateResponse.parseFrom(reply).getServiceState());
    }
    assertTrue(replies > state.getSerializedSize() / max);
    assertEquals(state, merged.build());
  }

  @Test
  void aSmallStateIsOneReply() throws Exception {
    TracingServiceState state = TracingServiceState.newBuilder().setNumSessions(1).build();
    ServiceStateReplies r = new ServiceStateReplies(state, 1024);
    assertEquals(state, QueryServiceStateResponse.parseFrom(r.next()).getServiceState());
    assertTrue(!r.hasNext());
  }
}
