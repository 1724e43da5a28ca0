/**
 * The producer library: how a Java application writes trace data into jtraced or into upstream
 * Perfetto's traced.
 *
 * <ul>
 *   <li>{@link org.jperfetto.producer.TracingProducer}: the connection to the service's producer
 *       socket (InitializeConnection, data source registration, the GetAsyncCommand stream, the
 *       shared memory buffer, reconnection).
 *   <li>{@link org.jperfetto.producer.DataSource} with a
 *       {@link org.jperfetto.producer.DataSourceHandler}: a named source, its lifecycle callbacks
 *       and {@code trace(ctx -> ...)}, which writes through the calling thread's writer to every
 *       active instance ({@link org.jperfetto.producer.TraceContext},
 *       {@link org.jperfetto.producer.DataSourceInstance}).
 *   <li>{@link org.jperfetto.producer.TraceWriter}: one sequence of TracePackets written straight
 *       into shared-memory chunks through {@link org.jperfetto.producer.proto.ProtoWriter}, with
 *       upstream's fragmenting, patching and data-loss marking;
 *       {@link org.jperfetto.producer.BufferExhaustedPolicy} says what happens when the buffer is
 *       full.
 * </ul>
 *
 * <p>A minimal producer:
 *
 * <pre>{@code
 * DataSource<Void> ds = DataSource.named("com.example.events");
 * try (TracingProducer producer = TracingProducer.builder("example").dataSource(ds).start()) {
 *   ds.trace(ctx -> ctx.newTracePacket().appendVarInt(TracePacket.TIMESTAMP_FIELD_NUMBER, System.nanoTime()));
 * }
 * }</pre>
 *
 * <p>Nothing on the tracing path allocates or locks, except acquiring a new chunk (a lock) and
 * creating a thread's writer the first time it traces an instance.
 */
package org.jperfetto.producer;
