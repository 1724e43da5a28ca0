package org.jperfetto.producer;

import java.util.ArrayList;
import java.util.List;

/**
 * TraceWriters over a private in-memory SMB whose committed chunks go at once into a real trace
 * buffer, and each writer's packets read back from it: for tests outside this package that need a
 * real writer (its chunks, small packets and fragments) and the exact bytes it wrote.
 */
public final class LocalTraceWriters implements AutoCloseable {
  private final TestSink sink;

  /** An SMB of pages 4 KiB pages and a trace buffer of bufferBytes. */
  public LocalTraceWriters(int pages, long bufferBytes) {
    sink = new TestSink(TestSink.Mode.SYNC, pages, 4096, bufferBytes);
  }

  /** A new writer (a sequence of its own) that stalls rather than drops when the SMB is full. */
  public TraceWriter newWriter() {
    return sink.newWriter(BufferExhaustedPolicy.STALL);
  }

  /** Every packet writer wrote and flushed so far, in order; call {@link TraceWriter#flush} first. */
  public List<byte[]> packetsOf(TraceWriter writer) {
    List<byte[]> out = new ArrayList<>();
    for (ServiceSide.Read r : sink.service.readAll()) {
      if (r.writerId() == writer.writerId()) {
        out.add(r.data());
      }
    }
    return out;
  }

  @Override
  public void close() {
    sink.close();
  }
}
