/**
 * The in-process backend: a jtraced embedded in the application with the application's producer
 * connected to it, for an app that only wants a trace file.
 * {@link org.jperfetto.tracing.InProcessTracing} starts both;
 * {@link org.jperfetto.tracing.InProcessSession} records one session into a file or into memory.
 * The data sources (TrackEvent, JFR, custom ones) are the producer library's, unchanged.
 */
package org.jperfetto.tracing;
