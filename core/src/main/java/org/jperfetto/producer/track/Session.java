package org.jperfetto.producer.track;

import org.jperfetto.protos.TrackEventConfig;

/**
 * What one instance of the "track_event" data source (one tracing session) asked for: which
 * categories (through {@link CategoryMatcher}), whether timestamps are delta-encoded, whether debug
 * annotations are kept.
 */
final class Session {
  private final CategoryMatcher matcher;
  private final boolean incrementalTimestamps;
  private final boolean filterDebugAnnotations;

  Session(TrackEventConfig config) {
    this.matcher = new CategoryMatcher(config);
    this.incrementalTimestamps = !config.getDisableIncrementalTimestamps();
    this.filterDebugAnnotations = config.getFilterDebugAnnotations();
  }

  boolean isEnabled(Category category) {
    return matcher.isEnabled(category.name(), category.tags());
  }

  /** Timestamps as deltas on the sequence's incremental clock (else absolute CLOCK_MONOTONIC). */
  boolean incrementalTimestamps() {
    return incrementalTimestamps;
  }

  boolean filterDebugAnnotations() {
    return filterDebugAnnotations;
  }
}
