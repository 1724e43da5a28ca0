package org.jperfetto.producer;

import org.jperfetto.producer.proto.ProtoWriter;

/**
 * What {@link DataSource#trace} hands the tracing function for one active instance: the calling
 * thread's writer for that instance, and the instance. Reused across calls on the same thread;
 * do not keep it.
 *
 * @param <S> the data source's per-instance state
 */
public final class TraceContext<S> {
  private final TraceWriter writer;
  private final DataSourceInstance<S> instance;

  TraceContext(TraceWriter writer, DataSourceInstance<S> instance) {
    this.writer = writer;
    this.instance = instance;
  }

  /** Starts a TracePacket (ending the previous one); see {@link TraceWriter#newTracePacket()}. */
  public ProtoWriter newTracePacket() {
    return writer.newTracePacket();
  }

  /** Ends the current packet (also done when the tracing function returns). */
  public void finishTracePacket() {
    writer.finishTracePacket();
  }

  /** Hands the writer's chunk to the service now. */
  public void flush() {
    writer.flush();
  }

  /** The data source instance this context writes for (its config, index and state). */
  public DataSourceInstance<S> instance() {
    return instance;
  }

  /** The instance's state, as {@link DataSourceHandler#onSetup} made it. */
  public S state() {
    return instance.state();
  }

  /** The writer behind this context (one per thread per instance). */
  public TraceWriter writer() {
    return writer;
  }
}
