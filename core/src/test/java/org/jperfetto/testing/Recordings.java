package org.jperfetto.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingDisabled;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.protos.TracePacket;

/** The end of a recording as tests drive it through a consumer: stop the session, read it back. */
public final class Recordings {
  private Recordings() {}

  /**
   * Disables the session, checks that it ended without an error, and reads the buffers; each wait
   * is bounded by timeout.
   */
  public static List<TracePacket> stopAndRead(TracingConsumer consumer, TracingSession session, Duration timeout)
      throws Exception {
    consumer.disableTracing().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    TracingDisabled end = session.disabled().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(end.ok(), end.error());
    return read(consumer, timeout);
  }

  /** Reads the buffers of the consumer's session, one packet per ReadBuffers packet. */
  public static List<TracePacket> read(TracingConsumer consumer, Duration timeout) throws Exception {
    List<TracePacket> packets = new ArrayList<>();
    consumer.readBuffers((slices, size) -> packets.add(TracePacket.parseFrom(ByteString.copyFrom(slices))))
        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    return packets;
  }
}
