package org.jperfetto.producer.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;

/**
 * A JFR event the bridge commits between two System.nanoTime() reads, so that the start time JFR
 * gives it can be related to CLOCK_MONOTONIC (see {@link JfrClock}). Harmless to other recordings.
 */
@Name(ClockMark.NAME)
@Label("jperfetto clock mark")
@Category("jperfetto")
@Description("Relates JFR's timestamps to CLOCK_MONOTONIC for the jvm.jfr Perfetto data source")
@StackTrace(false)
@Enabled(false)
@Threshold("0 ns")
final class ClockMark extends jdk.jfr.Event {
  static final String NAME = "org.jperfetto.ClockMark";

  @Label("CLOCK_MONOTONIC before")
  long monotonicBefore;

  @Label("CLOCK_MONOTONIC after")
  long monotonicAfter;

  @Label("Bridge")
  @Description("Which bridge committed the mark (every recording in the JVM sees every mark)")
  long bridge;

  @Label("Sequence")
  @Description("What a flush or stop of the bridge waits for; 0 for a mark that only checks the clock")
  long sequence;

  /** Commits a mark now (recorded only by recordings that enable {@link #NAME}). */
  static void emit(long bridge, long sequence) {
    ClockMark m = new ClockMark();
    long before = System.nanoTime();
    m.begin();
    long after = System.nanoTime();
    m.monotonicBefore = before;
    m.monotonicAfter = after;
    m.bridge = bridge;
    m.sequence = sequence;
    m.commit();
  }
}
