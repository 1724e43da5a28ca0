package org.jperfetto.opentelemetry.agent;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import java.lang.System.Logger.Level;
import org.jperfetto.opentelemetry.PerfettoSpanProcessor;
import org.jperfetto.producer.TracingProducer;

/**
 * The OpenTelemetry Java agent extension (loaded through {@code ExtensionEntry}): adds a {@link
 * PerfettoSpanProcessor} to the agent's tracer provider, connected to the system tracing service as
 * a producer. Options, as system properties or environment variables like the agent's own:
 * {@code otel.jperfetto.producer.name} (default "otel:" and the service name) and
 * {@code otel.jperfetto.socket} (default: the producer socket every producer looks for).
 */
public final class PerfettoExtension implements AutoConfigurationCustomizerProvider {
  private static final System.Logger LOG = System.getLogger("org.jperfetto.opentelemetry");

  /** Made by {@code ExtensionEntry} (by name). */
  public PerfettoExtension() {}

  @Override
  public void customize(AutoConfigurationCustomizer autoConfiguration) {
    autoConfiguration.addTracerProviderCustomizer((builder, config) -> {
      PerfettoSpanProcessor processor = PerfettoSpanProcessor.connect(producer(config));
      LOG.log(Level.INFO, "jperfetto OpenTelemetry extension: producer " + processor.producer().name() + " on "
          + processor.producer().socketPath() + ", category " + PerfettoSpanProcessor.CATEGORY);
      return builder.addSpanProcessor(processor);
    });
  }

  static TracingProducer.Builder producer(ConfigProperties config) {
    String service = config.getString("otel.service.name", "app");
    TracingProducer.Builder b = TracingProducer.builder(config.getString("otel.jperfetto.producer.name",
        "otel:" + service));
    String socket = config.getString("otel.jperfetto.socket");
    if (socket != null && !socket.isEmpty()) {
      b.socketPath(socket);
    }
    return b;
  }
}
