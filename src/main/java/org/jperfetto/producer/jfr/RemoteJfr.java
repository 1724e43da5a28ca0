package org.jperfetto.producer.jfr;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.management.JMX;
import javax.management.MBeanServerConnection;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import jdk.jfr.consumer.EventStream;
import jdk.management.jfr.EventTypeInfo;
import jdk.management.jfr.FlightRecorderMXBean;
import jdk.management.jfr.RemoteRecordingStream;

/**
 * Another JVM's Flight Recorder, driven over a JMX connection to it: each stream is a recording in
 * that JVM (created when the stream is opened, closed with it) whose data this process downloads
 * and parses: a {@link RemoteRecordingStream} where the target's FlightRecorderMXBean streams
 * (JDK 16+), else a {@link RemoteChunkStream} that cuts and reads the recording's chunks about once
 * a second (JDK 11 to 15). Nothing of jperfetto runs in the target.
 *
 * <p>Time. The events' timestamps are the target's JFR ticks, CLOCK_MONOTONIC on Linux (HotSpot's
 * javaTimeNanos, less a constant), which the parser turns into wall-clock instants with the anchor
 * JFR takes at the start of each chunk: the wall clock (CLOCK_REALTIME) and the ticks read
 * together. So a converted instant minus CLOCK_MONOTONIC is CLOCK_REALTIME minus CLOCK_MONOTONIC
 * at the chunk's start, a quantity of the machine, not of the process: this process measures it
 * (the bridge brackets a wall-clock read between two System.nanoTime reads when the recording
 * starts and at every flush) and the mapping is exact up to that bracket, unless NTP slews the
 * wall clock between the chunk's start and the measurement (parts per million of that time).
 */
public final class RemoteJfr implements JfrSource {
  private static final ObjectName MXBEAN;

  static {
    try {
      MXBEAN = new ObjectName(FlightRecorderMXBean.MXBEAN_NAME);
    } catch (MalformedObjectNameException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final int pid;
  private final MBeanServerConnection connection;
  private final FlightRecorderMXBean recorder;
  private final boolean streams;
  /** Streams opened and not closed yet: each holds a recording in the target. */
  private final Set<EventStream> open = ConcurrentHashMap.newKeySet();

  /**
   * The Flight Recorder of process pid, reached through connection (to that JVM's MBean server);
   * streams: whether its FlightRecorderMXBean streams (JDK 16+), else its chunks are read.
   */
  public RemoteJfr(int pid, MBeanServerConnection connection, boolean streams) {
    this.pid = pid;
    this.connection = connection;
    this.streams = streams;
    this.recorder = JMX.newMXBeanProxy(connection, MXBEAN, FlightRecorderMXBean.class);
  }

  /** Whether the JVM behind connection has a FlightRecorderMXBean (JDK 11+ with jdk.management.jfr). */
  public static boolean isAvailable(MBeanServerConnection connection) throws IOException {
    return connection.isRegistered(MXBEAN);
  }

  /** The target's recorder, e.g. to list its recordings. */
  public FlightRecorderMXBean recorder() {
    return recorder;
  }

  @Override
  public int pid() {
    return pid;
  }

  @Override
  public Set<String> eventTypes() throws IOException {
    Set<String> types = new HashSet<>();
    try {
      for (EventTypeInfo t : recorder.getEventTypes()) {
        types.add(t.getName());
      }
    } catch (RuntimeException e) { // an UndeclaredThrowableException around the connection's IOException
      throw new IOException("cannot list the JFR event types of JVM " + pid + ": " + e, e);
    }
    return types;
  }

  @Override
  public EventStream open(Map<String, String> settings) throws IOException {
    EventStream rs;
    if (streams) {
      RemoteRecordingStream remote = new RemoteRecordingStream(connection);
      remote.setSettings(settings);
      rs = remote;
    } else {
      rs = new RemoteChunkStream(recorder, settings);
    }
    open.add(rs);
    rs.onClose(() -> open.remove(rs));
    return rs;
  }

  /** How many streams (recordings in the target) are open. */
  public int openStreams() {
    return open.size();
  }

  /**
   * Waits up to timeout for the open streams to be closed by their instances' stops, then closes
   * those left (which closes their recordings in the target); returns how many it had to close.
   */
  public int closeAll(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!open.isEmpty() && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    int left = 0;
    for (EventStream s : List.copyOf(open)) {
      s.close();
      open.remove(s);
      left++;
    }
    return left;
  }

  @Override
  public void stop(EventStream stream) {
    if (stream instanceof RemoteRecordingStream remote) {
      remote.stop();
    } else {
      ((RemoteChunkStream) stream).stop();
    }
  }

  @Override
  public boolean marksClock() {
    return false;
  }

  @Override
  public String toString() {
    return "JFR of JVM " + pid + (streams ? "" : " (chunks)");
  }
}
