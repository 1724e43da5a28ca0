package org.jperfetto.service;

import java.time.Instant;
import java.util.List;

/**
 * The clocks the service reads for clock snapshots and for the timestamps of its own packets.
 * Clock ids are upstream's BuiltinClock values. The socket host can supply one reading every
 * clock through clock_gettime (BOOTTIME above all, the default trace clock); the default reads
 * what the JDK offers without native calls: MONOTONIC ({@link System#nanoTime()}, which is
 * CLOCK_MONOTONIC on Linux) and REALTIME.
 */
public interface ClockSource {
  /** BuiltinClock id of CLOCK_REALTIME. */
  int BUILTIN_CLOCK_REALTIME = 1;
  /** BuiltinClock id of CLOCK_REALTIME_COARSE. */
  int BUILTIN_CLOCK_REALTIME_COARSE = 2;
  /** BuiltinClock id of CLOCK_MONOTONIC. */
  int BUILTIN_CLOCK_MONOTONIC = 3;
  /** BuiltinClock id of CLOCK_MONOTONIC_COARSE. */
  int BUILTIN_CLOCK_MONOTONIC_COARSE = 4;
  /** BuiltinClock id of CLOCK_MONOTONIC_RAW. */
  int BUILTIN_CLOCK_MONOTONIC_RAW = 5;
  /** BuiltinClock id of CLOCK_BOOTTIME. */
  int BUILTIN_CLOCK_BOOTTIME = 6;

  /** One clock's value at the time of a snapshot. */
  record Reading(int clockId, long timestampNs) {}

  /** All clocks read as close together as possible; the first is the trace clock. */
  List<Reading> snapshot();

  /** The clock {@link #now()} reads (BOOTTIME is the trace's default clock). */
  int traceClockId();

  /** Now on the trace clock, in ns. */
  long now();

  /** MONOTONIC and REALTIME from the JDK; MONOTONIC is the trace clock. */
  static ClockSource jdk() {
    return new ClockSource() {
      @Override
      public List<Reading> snapshot() {
        long mono = System.nanoTime();
        Instant wall = Instant.now();
        return List.of(new Reading(BUILTIN_CLOCK_MONOTONIC, mono),
            new Reading(BUILTIN_CLOCK_REALTIME, wall.getEpochSecond() * 1_000_000_000L + wall.getNano()));
      }

      @Override
      public int traceClockId() {
        return BUILTIN_CLOCK_MONOTONIC;
      }

      @Override
      public long now() {
        return System.nanoTime();
      }
    };
  }
}
