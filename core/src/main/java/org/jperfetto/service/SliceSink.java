package org.jperfetto.service;

import java.util.List;
import org.jperfetto.protos.ReadBuffersResponse;

/** Where a read of a session goes: the consumer, a compressor, or the trace file. */
@FunctionalInterface
interface SliceSink {
  void onTraceData(List<ReadBuffersResponse.Slice> slices, boolean hasMore);
}
