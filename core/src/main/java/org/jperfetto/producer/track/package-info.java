/**
 * The TrackEvent API: slices, instants, counters, flows and debug annotations recorded by the
 * "track_event" data source in the format upstream Perfetto's C++ SDK writes, so trace_processor
 * and the UI read them alike.
 *
 * <p>Use: declare {@link org.jperfetto.producer.track.Category} constants, build one
 * {@link org.jperfetto.producer.track.TrackEvent} with them and register its
 * {@link org.jperfetto.producer.track.TrackEvent#dataSource()} with a
 * {@link org.jperfetto.producer.TracingProducer}. Sessions enable categories through
 * TrackEventConfig (upstream's rules: exact names, then "prefix*", then "*"; categories tagged
 * "slow" or "debug" are off unless asked for).
 *
 * <p>What goes on the wire, per thread and session (one writer sequence each): a first packet with
 * SEQ_INCREMENTAL_STATE_CLEARED, trace_packet_defaults (timestamp clock 64, the thread's track) and
 * a clock snapshot tying clock 64 (delta-encoded, 1 ns units) to CLOCK_MONOTONIC, which is what
 * {@link java.lang.System#nanoTime()} reads on Linux; then the thread and process
 * TrackDescriptors; then events with SEQ_NEEDS_INCREMENTAL_STATE, whose event names, categories
 * and debug annotation names are interned (the definitions ride in the packet that first uses
 * them). Custom and counter tracks get their TrackDescriptor before their first event. When the
 * service clears incremental state (or a new session starts) the sequence starts over.
 *
 * <p>Cost: a disabled category is one volatile load and a branch; an enabled event allocates
 * nothing once its strings are interned.
 */
package org.jperfetto.producer.track;
