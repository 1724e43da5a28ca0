package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jperfetto.testing.Recordings;
import org.jperfetto.consumer.FlushFlags;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.consumer.TracingSession;
import org.jperfetto.ipc.ClientInfo;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.service.ipc.PosixClockSource;
import org.jperfetto.service.ipc.ProducerRelay;
import org.jperfetto.service.ipc.ServiceHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multi-machine tracing on loopback: a host jtraced with a TCP producer endpoint that also serves
 * RelayPort; a Java producer straight over TCP (shared memory emulated: chunks inside CommitData);
 * and a relay (jtraced's relay mode) forwarding a local producer to the host, with its machine id,
 * SystemInfo and clock sync rounds. The trace is checked as trace_processor would use it.
 */
@Timeout(90)
class MultiMachineIT {
  private static final String DS = "mm.test";
  @TempDir
  Path dir;

  private ServiceHost startHost() throws Exception {
    return ServiceHost.start(ServiceHost.Options.of(dir.resolve("p.sock") + ",127.0.0.1:0",
        dir.resolve("c.sock").toString()).withRelayEndpoints(Set.of("127.0.0.1:0")));
  }

  private static TracingProducer producer(String name, String socket, DataSource<String> ds) {
    return TracingProducer.builder(name).socketPath(socket).smbPageSizeHint(4096)
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).dataSource(ds).start();
  }

  /** One session over every producer: each writes n packets with its own text; all packets back. */
  private static List<TracePacket> record(ServiceHost host, int n, List<DataSource<String>> sources,
      List<String> texts, List<TracingProducer> producers) throws Exception {
    for (TracingProducer p : producers) {
      assertTrue(p.awaitConnected(Duration.ofSeconds(20)));
      p.sync().get(20, TimeUnit.SECONDS);
    }
    try (TracingConsumer consumer = TracingConsumer.connect(host.consumerSocket())) {
      TracingSession session = consumer.enableTracing(TraceConfig.newBuilder()
          .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096))
          .addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder().setName(DS)))
          .setTraceAllMachines(true) // else, as upstream since v54, only the host's producers
          .build());
      FakeProducerHost.await("every producer's instance running",
          () -> sources.stream().allMatch(DataSource::isEnabled));
      for (int i = 0; i < sources.size(); i++) {
        JtracedFixture.write(sources.get(i), texts.get(i), n);
      }
      consumer.flush(Duration.ofSeconds(5), FlushFlags.NONE).get(20, TimeUnit.SECONDS);
      return Recordings.stopAndRead(consumer, session, Duration.ofSeconds(20));
    }
  }

  private static List<TracePacket> withText(List<TracePacket> packets, String text) {
    return packets.stream().filter(p -> p.hasForTesting()
        && p.getForTesting().getPayload().getStrList().equals(List.of(text))).toList();
  }

  @Test
  void javaProducerOverTcpCommitsChunksInline() throws Exception {
    try (ServiceHost host = startHost()) {
      String tcp = host.producerSockets().get(1);
      assertNotEquals("127.0.0.1:0", tcp, "the TCP endpoint is named by its real port");
      DataSource<String> ds = JtracedFixture.dataSource(DS, BufferExhaustedPolicy.STALL);
      try (TracingProducer p = producer("tcp-producer", tcp, ds)) {
        // 3000 packets: several SMB pages and more than one CommitData frame's worth of chunks
        List<TracePacket> packets = record(host, 3000, List.of(ds), List.of("over-tcp"), List.of(p));
        List<TracePacket> ours = withText(packets, "over-tcp");
        assertEquals(3000, ours.size());
        // straight over TCP without SetPeerIdentity: upstream's host treats it as its own machine
        assertTrue(ours.stream().noneMatch(TracePacket::hasMachineId));
        assertTrue(ours.stream().allMatch(pk -> pk.getTrustedUid() == 0 && !pk.hasTrustedPid()));
        assertFalse(p.usingProducerProvidedSmb());
      }
    }
  }

  @Test
  void relayedProducerGetsItsMachineIdAndTheRemoteClocksAreRecorded() throws Exception {
    try (ServiceHost host = startHost();
        ProducerRelay relay = ProducerRelay.start(List.of(dir.resolve("remote.sock").toString()),
            host.producerSockets().get(1), new PosixClockSource())) {
      FakeProducerHost.await("a clock sync round", () -> relay.completedSyncs() >= 1);
      DataSource<String> remoteDs = JtracedFixture.dataSource(DS, BufferExhaustedPolicy.STALL);
      DataSource<String> localDs = JtracedFixture.dataSource(DS, BufferExhaustedPolicy.STALL);
      try (TracingProducer remote = producer("remote-producer", relay.producerSockets().get(0), remoteDs);
          TracingProducer local = producer("local-producer", host.producerSockets().get(0), localDs)) {
        List<TracePacket> packets = record(host, 500, List.of(remoteDs, localDs), List.of("remote", "local"),
            List.of(remote, local));
        int expectedMachine = ClientInfo.machineIdOf(
            java.nio.file.Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip(), "");
        List<TracePacket> remotePackets = withText(packets, "remote");
        List<TracePacket> localPackets = withText(packets, "local");
        assertEquals(500, remotePackets.size());
        assertEquals(500, localPackets.size());
        assertTrue(remotePackets.stream().allMatch(p -> p.getMachineId() == expectedMachine),
            "remote packets carry machine_id " + Integer.toUnsignedString(expectedMachine));
        assertTrue(localPackets.stream().noneMatch(TracePacket::hasMachineId));
        // trusted uid/pid are those the relay saw on its own socket: this process
        int pid = (int) ProcessHandle.current().pid();
        assertTrue(remotePackets.stream().allMatch(p -> p.getTrustedPid() == pid));
        assertNotEquals(remotePackets.get(0).getTrustedPacketSequenceId(),
            localPackets.get(0).getTrustedPacketSequenceId());

        try (TracingConsumer c = TracingConsumer.connect(host.consumerSocket())) {
          var producers = c.queryServiceState(false).get(20, TimeUnit.SECONDS).getProducersList();
          var remoteEntry = producers.stream().filter(p -> p.getName().equals("remote-producer")).findFirst()
              .orElseThrow();
          assertEquals(expectedMachine, remoteEntry.getMachineId());
          assertTrue(remoteEntry.hasMachineName());
          assertTrue(producers.stream().filter(p -> p.getName().equals("local-producer"))
              .noneMatch(p -> p.hasMachineId()), "machine info for relayed producers only, as traced");
        }

        List<TracePacket> remoteInfo = packets.stream()
            .filter(p -> p.hasSystemInfo() && p.getMachineId() == expectedMachine).toList();
        assertEquals(1, remoteInfo.size(), "one SystemInfo for the remote machine");
        assertTrue(remoteInfo.get(0).getSystemInfo().getUtsname().hasSysname());
        assertEquals(1, packets.stream().filter(p -> p.hasSystemInfo() && !p.hasMachineId()).count(),
            "and the host's own");

        List<TracePacket> sync = packets.stream().filter(TracePacket::hasRemoteClockSync).toList();
        assertEquals(1, sync.size());
        assertEquals(expectedMachine, sync.get(0).getMachineId());
        var rounds = sync.get(0).getRemoteClockSync().getSyncedClocksList();
        assertTrue(rounds.size() >= 2, "a PING and an UPDATE: " + rounds.size());
        for (var round : rounds) {
          assertTrue(round.getClientClocks().getClocksCount() >= 2);
          assertTrue(round.getHostClocks().getClocksCount() >= 2);
          // same kernel on both sides here: the host read its BOOTTIME after the relay read its own
          long client = bootTime(round.getClientClocks());
          long hostTs = bootTime(round.getHostClocks());
          assertTrue(hostTs >= client, "host " + hostTs + " < relay " + client);
        }
      }
    }
  }

  private static long bootTime(org.jperfetto.protos.ClockSnapshot s) {
    return s.getClocksList().stream().filter(c -> c.getClockId() == 6).findFirst().orElseThrow().getTimestamp();
  }
}
