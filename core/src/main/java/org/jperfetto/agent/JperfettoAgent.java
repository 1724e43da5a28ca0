package org.jperfetto.agent;

import java.lang.System.Logger.Level;
import java.lang.instrument.Instrumentation;
import org.jperfetto.agent.boot.MethodHooks;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.jfr.JfrDataSource;
import org.jperfetto.producer.track.TrackEvent;

/**
 * The agent in the traced JVM (started by {@link org.jperfetto.agent.boot.AgentBoot} in its own
 * class loader): a {@link TracingProducer} for the process on the system backend, connecting (and
 * reconnecting) in the background, with the TrackEvent data source (method slices, category
 * {@code jvm.method}), {@code jvm.methods} (method patterns from a session's config) and
 * {@code jvm.jfr}. Nothing records until a session enables them.
 */
public final class JperfettoAgent {
  private static final System.Logger LOG = System.getLogger(JperfettoAgent.class.getName());
  private static volatile TracingProducer producer;

  private JperfettoAgent() {}

  /**
   * Starts the agent.
   *
   * @param dynamic loaded into a running JVM (attach) rather than at start-up
   * @throws IllegalArgumentException for bad options
   * @throws IllegalStateException if this JVM refuses the agent's native calls
   */
  public static void start(String optionText, Instrumentation inst, boolean dynamic) {
    AgentOptions options = AgentOptions.parse(optionText);
    NativeAccess.check(JperfettoAgent.class.getModule());
    MethodTable table = new MethodTable();
    MethodSlices slices = new MethodSlices(table);
    TrackEvent te = TrackEvent.builder().categories(MethodSlices.CATEGORY)
        .onSessionsChanged(slices::sessionsChanged).build();
    slices.bind(te);
    MethodHooks.install(slices);
    TracingProducer.Builder b = TracingProducer.builder(options.name()).dataSource(te.dataSource());
    if (options.socket() != null) {
      b.socketPath(options.socket());
    }
    if (options.smbKb() > 0) {
      b.smbSizeHint(options.smbKb() * 1024);
    }
    if (options.jfr()) {
      b.dataSource(JfrDataSource.create(options.jfrConfig()));
    }
    MethodPatterns patterns = MethodPatterns.parse(options.methods());
    MethodTransformer transformer = new MethodTransformer(inst, patterns, table);
    int rewritten = transformer.install();
    b.dataSource(MethodsDataSource.create(transformer));
    TracingProducer p = b.start();
    producer = p;
    Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(p::close));
    LOG.log(Level.INFO, "jperfetto agent " + (dynamic ? "attached" : "started") + ": producer " + options.name()
        + " on " + p.socketPath() + "; jvm.jfr " + (options.jfr() ? "on" : "off") + "; " + patterns.entries().size()
        + " method pattern(s), " + rewritten + " loaded class(es) rewritten");
  }

  /** The agent's producer (null before start). */
  static TracingProducer producer() {
    return producer;
  }
}
