package org.jperfetto.producer.jfr;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceHandler;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.protos.DataSourceDescriptor;

/**
 * The {@code jvm.jfr} data source: the JVM's own activity (GC, safepoints, JIT, locks, allocation,
 * threads, virtual threads, class loading, CPU load) from JDK Flight Recorder, on the same thread
 * tracks and time axis as the app's TrackEvents.
 *
 * <p>Opt in with one call before or after the producer connects:
 * <pre>{@code
 * TracingProducer producer = TracingProducer.builder("my-app").start();
 * JfrDataSource.register(producer);
 * }</pre>
 * The TrackEvent API does not register it by itself: a JFR recording has a cost and is the app's
 * choice. No JFR recording runs until a session enables {@code jvm.jfr}; each instance runs its own
 * RecordingStream from setup/start to stop. The config is {@code DataSourceConfig.legacy_config}
 * (see {@link JfrConfig}); a bad config is refused at setup with a logged error naming the problem,
 * and that instance records nothing.
 *
 * <p>Flush and stop drain the stream first (see {@link JfrBridge}): both finish asynchronously,
 * once JFR's next flush (about a second, at most {@link #DRAIN_TIMEOUT}) has been written; neither
 * blocks the producer's thread.
 */
public final class JfrDataSource {
  /** The data source name a session asks for. */
  public static final String NAME = "jvm.jfr";
  /**
   * Longest a flush waits for the stream to drain before it is acknowledged anyway (under the
   * service's 5 s timeout).
   */
  public static final Duration DRAIN_TIMEOUT = Duration.ofMillis(3000);

  private static final Logger LOG = System.getLogger(JfrDataSource.class.getName());
  /** Whether this runtime has JDK Flight Recorder: a jlinked runtime may have left jdk.jfr out. */
  static final boolean JFR_IN_RUNTIME = ModuleLayer.boot().findModule("jdk.jfr").isPresent();
  private static final AtomicBoolean TOLD_NO_JFR = new AtomicBoolean();

  private JfrDataSource() {}

  /** A new {@code jvm.jfr} data source (register it with a {@link TracingProducer}). */
  public static DataSource<?> create() {
    return create("");
  }

  /**
   * A new {@code jvm.jfr} data source whose instances use defaultConfig (a legacy_config string,
   * see {@link JfrConfig}) when the session's config leaves legacy_config empty, e.g. the groups a
   * -javaagent option chose.
   *
   * @throws IllegalArgumentException if defaultConfig does not parse
   */
  public static DataSource<?> create(String defaultConfig) {
    // Without jdk.jfr even loading this JVM's source fails; its instances then record nothing.
    return newDataSource(defaultConfig, JFR_IN_RUNTIME ? JfrSource.thisJvm() : null);
  }

  /**
   * A new {@code jvm.jfr} data source recording source's Flight Recorder (another JVM's, for
   * {@code jperfetto attach}), with defaultConfig as in {@link #create(String)}.
   *
   * @throws IllegalArgumentException if defaultConfig does not parse
   */
  public static DataSource<?> create(String defaultConfig, RemoteJfr source) {
    return newDataSource(defaultConfig, source);
  }

  /** The data source recording source's Flight Recorder, typed with its instances' state. */
  static DataSource<JfrBridge> newDataSource(String defaultConfig, JfrSource source) {
    JfrConfig.parse(defaultConfig);
    DataSourceDescriptor descriptor = DataSourceDescriptor.newBuilder()
        .setName(NAME)
        .setWillNotifyOnStop(true)
        // A clear makes the encoder describe its tracks again and start the stack samples' interned
        // frames afresh, so a ring buffer that overwrote the first ones still decodes.
        .setHandlesIncrementalStateClear(true)
        .build();
    Handler handler = new Handler(defaultConfig, source);
    DataSource<JfrBridge> ds = DataSource.create(descriptor, handler, BufferExhaustedPolicy.STALL_THEN_DROP);
    handler.dataSource = ds;
    return ds;
  }

  /**
   * Initializes JFR in the background without starting a recording. The first recording of a JVM
   * pays for JFR's own set-up (a few hundred ms, seconds on a loaded machine) after the session
   * started; an app that knows it will be traced with jvm.jfr (the demo) calls this early so the
   * bridge records from the session's first moments. Returns the thread doing it.
   */
  public static Thread warmUpAsync() {
    return Thread.ofPlatform().daemon().name("jvm.jfr warm-up").start(() -> {
      try {
        jdk.jfr.FlightRecorder.getFlightRecorder();
      } catch (RuntimeException | Error e) { // e.g. JFR not in this runtime: start() reports it later
        LOG.log(Level.DEBUG, "jvm.jfr: warm-up failed", e);
      }
    });
  }

  /** Creates the data source and registers it with producer; returns it. */
  public static DataSource<?> register(TracingProducer producer) {
    DataSource<?> ds = create();
    producer.register(ds);
    return ds;
  }

  /** How many started instances of ds have their JFR stream running (it starts asynchronously). */
  public static int recordingInstances(DataSource<?> ds) {
    int[] n = {0};
    ds.trace(ctx -> {
      if (ctx.state() instanceof JfrBridge bridge && bridge.isRecording()) {
        n[0]++;
      }
    });
    return n[0];
  }

  private static final class Handler implements DataSourceHandler<JfrBridge> {
    DataSource<JfrBridge> dataSource;
    private final String defaultConfig;
    private final JfrSource source;

    Handler(String defaultConfig, JfrSource source) {
      this.defaultConfig = defaultConfig;
      this.source = source;
    }

    @Override
    public JfrBridge onSetup(DataSourceInstance<JfrBridge> instance) {
      if (!JFR_IN_RUNTIME) {
        if (TOLD_NO_JFR.compareAndSet(false, true)) {
          LOG.log(Level.WARNING, "jvm.jfr: this Java runtime has no jdk.jfr module, so the JVM's own events and "
              + "Java stack samples are not recorded; TrackEvent and other data sources record as usual "
              + "(a runtime with jdk.jfr, e.g. jlink --add-modules jdk.jfr, records them)");
        }
        return null;
      }
      String text = instance.config().getLegacyConfig();
      try {
        return new JfrBridge(source, JfrConfig.parse(text.isBlank() ? defaultConfig : text), dataSource, instance);
      } catch (IllegalArgumentException e) {
        LOG.log(Level.ERROR, "jvm.jfr: instance " + instance.instanceId() + " refused: " + e.getMessage());
        return null;
      }
    }

    /** The stream starts once the instance is active, so its first events have somewhere to go. */
    @Override
    public void onActive(DataSourceInstance<JfrBridge> instance) {
      JfrBridge b = instance.state();
      if (b != null) {
        b.start();
      }
    }

    @Override
    public void onFlush(DataSourceInstance<JfrBridge> instance, FlushHandle flush) {
      JfrBridge b = instance.state();
      if (b == null) {
        flush.done();
        return;
      }
      b.flush(flush, DRAIN_TIMEOUT);
    }

    @Override
    public void onStop(DataSourceInstance<JfrBridge> instance, StopHandle stop) {
      JfrBridge b = instance.state();
      if (b == null) {
        stop.done();
        return;
      }
      Thread.ofPlatform().daemon().name("jvm.jfr stop " + instance.instanceId()).start(() -> {
        try {
          b.stop();
        } finally {
          stop.done();
        }
      });
    }
  }
}
