package org.jperfetto.service;

import org.jperfetto.protos.TraceConfig;

/**
 * Which machines a session's data source reaches, as upstream's service decides it (since v54):
 * with a machine_name_filter, the producers of the machines named there ("host" also names the
 * service's own machine); without one, only the service's own machine, unless the session sets
 * trace_all_machines. So a session written for one machine never starts data sources on the
 * machines relays connected.
 */
final class MachineFilter {
  private MachineFilter() {}

  static boolean matches(ClientIdentity producer, TraceConfig session, TraceConfig.DataSource cfg) {
    if (cfg.getMachineNameFilterCount() > 0) {
      return cfg.getMachineNameFilterList().contains(producer.machineName())
          || producer.isHostMachine() && cfg.getMachineNameFilterList().contains("host");
    }
    return producer.isHostMachine() || session.getTraceAllMachines();
  }
}
