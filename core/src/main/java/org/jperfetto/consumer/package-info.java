/**
 * The consumer side of Perfetto: connect to a tracing service's consumer socket, start and stop
 * tracing sessions, read their trace back and write it as a Perfetto trace file.
 *
 * <p>{@link org.jperfetto.consumer.TracingConsumer} speaks upstream's ConsumerPort over
 * Perfetto's IPC, so it works with jperfetto's jtraced and with upstream {@code traced} alike.
 * {@link org.jperfetto.consumer.TraceFileWriter} writes packets in the trace file format (each
 * packet as field 1 of {@code perfetto.protos.Trace}).
 */
package org.jperfetto.consumer;
