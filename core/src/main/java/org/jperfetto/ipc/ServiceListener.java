package org.jperfetto.ipc;

/** Told, on the event-loop thread, when clients bind a service and when they go away. */
public interface ServiceListener {
  /** {@code client} bound the service (once per connection, on its first BindService). */
  default void onClientBound(ClientInfo client) {}

  /** {@code client}, which had bound the service, disconnected or was dropped. */
  default void onClientDisconnected(ClientInfo client) {}
}
