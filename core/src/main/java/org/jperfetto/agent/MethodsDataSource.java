package org.jperfetto.agent;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.regex.Pattern;
import org.jperfetto.producer.BufferExhaustedPolicy;
import org.jperfetto.producer.DataSource;
import org.jperfetto.producer.DataSourceHandler;
import org.jperfetto.producer.DataSourceInstance;
import org.jperfetto.protos.DataSourceDescriptor;

/**
 * The {@code jvm.methods} data source: method patterns from a session's config instead of the
 * agent's options. Its {@code DataSourceConfig.legacy_config} is a list of {@link MethodPatterns}
 * separated by spaces, new lines, commas or {@code +}; the slices themselves are TrackEvent slices
 * of category {@code jvm.method}, so the session also enables {@code track_event}. It writes no
 * packet: at start it has the loaded classes the patterns name rewritten, and only then tells the
 * service it started (so a consumer that waits for all data sources to start sees every call);
 * at stop they get their original bytecode back unless another pattern still names them.
 */
final class MethodsDataSource {
  static final String NAME = "jvm.methods";
  private static final System.Logger LOG = System.getLogger(MethodsDataSource.class.getName());
  private static final Pattern SEPARATORS = Pattern.compile("[\\s,+]+");

  private MethodsDataSource() {}

  static DataSource<MethodPatterns> create(MethodTransformer transformer) {
    DataSourceDescriptor descriptor = DataSourceDescriptor.newBuilder().setName(NAME).setWillNotifyOnStart(true)
        .build();
    return DataSource.create(descriptor, new Handler(transformer), BufferExhaustedPolicy.DROP);
  }

  /** The patterns of a legacy_config string. */
  static MethodPatterns parse(String config) {
    return MethodPatterns.parse(List.of(SEPARATORS.split(config.strip())));
  }

  private record Handler(MethodTransformer transformer) implements DataSourceHandler<MethodPatterns> {
    @Override
    public MethodPatterns onSetup(DataSourceInstance<MethodPatterns> instance) {
      try {
        return parse(instance.config().getLegacyConfig());
      } catch (IllegalArgumentException e) {
        LOG.log(Level.ERROR, NAME + ": instance " + instance.instanceId() + " refused: " + e.getMessage());
        return null;
      }
    }

    /** Rewrites once the instance is active: a rewritten method traces at once (see onActive). */
    @Override
    public void onActive(DataSourceInstance<MethodPatterns> instance) {
      MethodPatterns p = instance.state();
      if (p != null && !p.isEmpty()) {
        int n = transformer.addSessionPatterns(instance.instanceId(), p);
        LOG.log(Level.INFO, NAME + ": instance " + instance.instanceId() + ": " + p.entries().size()
            + " pattern(s), " + n + " loaded class(es) rewritten");
      }
    }

    @Override
    public void onStop(DataSourceInstance<MethodPatterns> instance, StopHandle stop) {
      try {
        transformer.removeSessionPatterns(instance.instanceId());
      } finally {
        stop.done();
      }
    }
  }
}
