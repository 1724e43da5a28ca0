package org.jperfetto.consumer;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.util.List;

/**
 * Receives the packets of a trace read back from the service, whole, in service order. Called on
 * the consumer's I/O thread: keep it quick (buffered file writes are fine).
 */
@FunctionalInterface
public interface TracePacketSink {
  /**
   * One whole TracePacket, as the slices it arrived in (almost always one). The slices are
   * immutable and may be kept.
   *
   * @param size the packet's size in bytes (the sum of the slice sizes)
   */
  void onPacket(List<ByteString> slices, int size) throws IOException;
}
