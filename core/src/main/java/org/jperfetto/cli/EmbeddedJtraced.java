package org.jperfetto.cli;

import java.io.IOException;
import java.util.Map;
import org.jperfetto.service.ipc.ServiceHost;
import org.jperfetto.ipc.DefaultSockets;

/**
 * The in-process jtraced that {@code jperfetto} starts when nothing answers on the consumer socket.
 *
 * <p>It listens where a system service would: on the consumer socket that did not answer and on
 * the default producer socket ({@code PERFETTO_PRODUCER_SOCK_NAME}, else /run/perfetto or /tmp), so
 * producers in other processes — Java apps using the producer library, or upstream Perfetto SDK
 * apps — write into the session as they would into traced. Its sockets go away when it closes.
 */
public final class EmbeddedJtraced implements EmbeddedService.Factory {
  private final Map<String, String> env;

  /** @param env the environment to take {@code PERFETTO_PRODUCER_SOCK_NAME} from */
  public EmbeddedJtraced(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  @Override
  public EmbeddedService start(String consumerSocket) throws IOException {
    String producerSockets = env.get(DefaultSockets.PRODUCER_ENV);
    if (producerSockets == null || producerSockets.isEmpty()) {
      producerSockets = DefaultSockets.producer();
    }
    ServiceHost host = ServiceHost.start(ServiceHost.Options.of(producerSockets, consumerSocket));
    return new EmbeddedService() {
      @Override
      public String consumerSocket() {
        return host.consumerSocket();
      }

      @Override
      public String producerSocket() {
        return String.join(",", host.producerSockets());
      }

      @Override
      public void close() {
        host.close();
      }
    };
  }
}
