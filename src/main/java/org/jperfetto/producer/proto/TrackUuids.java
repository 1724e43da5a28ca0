package org.jperfetto.producer.proto;

import java.time.Instant;

/**
 * The uuids of a process's track and its threads' tracks. Every data source that describes a
 * process or a thread (TrackEvent, jvm.jfr's lanes and stack samples, the agent) must use these,
 * and so must every copy of the library loaded in one process (an agent beside an app's own jar):
 * trace_processor takes a second track uuid for one pid or tid as a new process or thread (pid or
 * tid reuse), which splits one JVM's events over several processes in the UI. So the uuids derive
 * only from what every copy sees alike: the pid, the process's start time and the tid.
 */
public final class TrackUuids {
  private TrackUuids() {}

  /** The process track of process pid, started at startMillis (epoch ms, 0 if unknown). */
  public static long process(int pid, long startMillis) {
    return nonZero(mix(pid * 0xC2B2AE3D27D4EB4FL ^ mix(startMillis + 0x2545F4914F6CDD1DL)));
  }

  /** The process track of process pid, as {@link #process(int, long)} with its start time from the OS. */
  public static long process(int pid) {
    long start = ProcessHandle.of(pid).flatMap(h -> h.info().startInstant()).map(Instant::toEpochMilli).orElse(0L);
    return process(pid, start);
  }

  /** The thread track of thread tid of the process whose track is processUuid. */
  public static long thread(long processUuid, long tid) {
    return nonZero(mix(processUuid ^ (tid * 0x9E3779B97F4A7C15L + 1)));
  }

  /** A 64-bit finalizer (murmur3's fmix64). */
  public static long mix(long z) {
    z ^= z >>> 33;
    z *= 0xFF51AFD7ED558CCDL;
    z ^= z >>> 33;
    z *= 0xC4CEB9FE1A85EC53L;
    return z ^ (z >>> 33);
  }

  /** v, or 1 where v is 0 (uuid 0 means "no track" to trace_processor). */
  public static long nonZero(long v) {
    return v == 0 ? 1 : v;
  }
}
