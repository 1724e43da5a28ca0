package org.jperfetto.opentelemetry;

/**
 * What the processor keeps of a span while it is open: when and where it started, and where its
 * in-process parent started (null: no such parent, or one started before the session).
 */
record OpenSpan(long startNanos, Thread startThread, Thread parentThread) {}
