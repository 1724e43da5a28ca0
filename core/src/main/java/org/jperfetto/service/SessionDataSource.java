package org.jperfetto.service;

import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;

/**
 * One data source of one producer as the service set it up for one session (the producer runs it
 * as its {@code producer.DataSourceInstance}).
 */
final class SessionDataSource {
  enum State { CONFIGURED, STARTING, STARTED, STOPPING, STOPPED }

  final long instanceId;
  final int producerId;
  final DataSourceConfig config;
  final DataSourceDescriptor descriptor;
  State state = State.CONFIGURED;

  SessionDataSource(long instanceId, int producerId, DataSourceConfig config,
      DataSourceDescriptor descriptor) {
    this.instanceId = instanceId;
    this.producerId = producerId;
    this.config = config;
    this.descriptor = descriptor;
  }

  String name() {
    return descriptor.getName();
  }
}
