package org.jperfetto.producer.jfr;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.consumer.EventStream;
import jdk.jfr.consumer.RecordingStream;

/**
 * The JVM whose JDK Flight Recorder a {@code jvm.jfr} instance records: this one (the library and
 * the agent), or another one driven from outside over JMX ({@link RemoteJfr}, what
 * {@code jperfetto attach} uses for JVMs the agent cannot run in). Either way the events are mapped
 * and written by the same {@link JfrBridge}; only where the stream comes from, whose process the
 * tracks describe, and how JFR's time is related to CLOCK_MONOTONIC differ.
 */
sealed interface JfrSource permits JfrSource.ThisJvm, RemoteJfr {
  /** The process the events happen in: the pid on their process and thread tracks. */
  int pid();

  /** The JFR event types that JVM has (which sampler it offers, say). */
  Set<String> eventTypes() throws IOException;

  /** A new stream with settings applied, not started. */
  EventStream open(Map<String, String> settings) throws IOException;

  /**
   * Ends the recording behind a started stream and returns once every event it holds was
   * dispatched (then the stream is closed).
   */
  void stop(EventStream stream);

  /**
   * Whether the bridge can commit its {@link ClockMark} into this JVM's recording and see it come
   * back (only in-process); otherwise the clock is related through the wall clock (see
   * {@link RemoteJfr}).
   */
  boolean marksClock();

  /** This JVM's own Flight Recorder. */
  static JfrSource thisJvm() {
    return ThisJvm.INSTANCE;
  }

  /** This JVM: a RecordingStream, with the bridge's clock marks enabled. */
  record ThisJvm() implements JfrSource {
    static final ThisJvm INSTANCE = new ThisJvm();

    @Override
    public int pid() {
      return (int) ProcessHandle.current().pid();
    }

    @Override
    public Set<String> eventTypes() {
      Set<String> types = new HashSet<>();
      for (EventType t : FlightRecorder.getFlightRecorder().getEventTypes()) {
        types.add(t.getName());
      }
      return types;
    }

    @Override
    public EventStream open(Map<String, String> settings) {
      RecordingStream rs = new RecordingStream();
      rs.setSettings(settings);
      rs.enable(ClockMark.class).withThreshold(Duration.ZERO).withoutStackTrace();
      return rs;
    }

    @Override
    public void stop(EventStream stream) {
      // RecordingStream.stop (JDK 20+) ends the recording with a last flush and returns once the
      // stream thread has dispatched every event in it: no separate drain (a JFR flush, ~1 s) first.
      ((RecordingStream) stream).stop();
    }

    @Override
    public boolean marksClock() {
      return true;
    }
  }
}
