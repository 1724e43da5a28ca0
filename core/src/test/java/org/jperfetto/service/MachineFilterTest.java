package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.protos.TraceConfig;
import org.junit.jupiter.api.Test;

/** Which machines' producers a session's data source reaches (upstream's rules since v54). */
class MachineFilterTest {
  private static final ClientIdentity HOST = new ClientIdentity(0, 1);
  private static final ClientIdentity VM = new ClientIdentity(0, 2, 77, "vm1");
  private static final TraceConfig.DataSource ANY = TraceConfig.DataSource.getDefaultInstance();

  @Test
  void withoutFilterOnlyTheHostUnlessAllMachinesAsked() {
    TraceConfig plain = TraceConfig.getDefaultInstance();
    assertTrue(MachineFilter.matches(HOST, plain, ANY));
    assertFalse(MachineFilter.matches(VM, plain, ANY));
    TraceConfig all = TraceConfig.newBuilder().setTraceAllMachines(true).build();
    assertTrue(MachineFilter.matches(VM, all, ANY));
    assertTrue(MachineFilter.matches(HOST, all, ANY));
  }

  @Test
  void machineNameFilterNamesMachinesAndHostNamesTheServiceOwn() {
    TraceConfig plain = TraceConfig.getDefaultInstance();
    TraceConfig.DataSource vmOnly = TraceConfig.DataSource.newBuilder().addMachineNameFilter("vm1").build();
    assertTrue(MachineFilter.matches(VM, plain, vmOnly));
    assertFalse(MachineFilter.matches(HOST, plain, vmOnly));
    assertFalse(MachineFilter.matches(new ClientIdentity(0, 3, 78, "vm2"), plain, vmOnly));
    TraceConfig.DataSource hostOnly = TraceConfig.DataSource.newBuilder().addMachineNameFilter("host").build();
    assertTrue(MachineFilter.matches(HOST, plain, hostOnly));
    assertFalse(MachineFilter.matches(VM, TraceConfig.newBuilder().setTraceAllMachines(true).build(), hostOnly));
  }
}
