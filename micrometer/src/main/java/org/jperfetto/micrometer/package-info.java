/**
 * Micrometer Observations as Perfetto TrackEvent slices: {@link
 * org.jperfetto.micrometer.PerfettoObservationHandler}, an {@code ObservationHandler} for any
 * context, with its own TrackEvent and the category {@code micrometer}. The module depends on the
 * core ({@code org.jperfetto:jperfetto}) and on {@code micrometer-observation}, so the core itself
 * takes no Micrometer dependency. Guide, Spring Boot 3 included: docs/micrometer.md.
 */
package org.jperfetto.micrometer;
