package org.jperfetto.service;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import java.util.List;
import org.jperfetto.BuildVersion;
import org.jperfetto.protos.ClockSnapshot;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.jperfetto.protos.TraceUuid;
import org.jperfetto.protos.TracingServiceEvent;

/**
 * The packets the service itself writes into a trace, each on the service's sequence
 * (trusted_packet_sequence_id 1) with the service's uid.
 */
final class ServicePackets {
  /** synchronization_marker bytes (upstream's kSyncMarker: lets readers resync a cut stream). */
  static final byte[] SYNC_MARKER = {(byte) 0x82, 0x47, 0x7a, 0x76, (byte) 0xb2, (byte) 0x8d,
      0x42, (byte) 0xba, (byte) 0x81, (byte) 0xdc, 0x33, 0x32, 0x6d, 0x57, (byte) 0xa0, 0x79};

  static final String SERVICE_VERSION = BuildVersion.NAME;

  private final int serviceUid;
  private final ClockSource clocks;

  /** The uid on the service's own packets. */
  int serviceUid() {
    return serviceUid;
  }

  ServicePackets(int serviceUid, ClockSource clocks) {
    this.serviceUid = serviceUid;
    this.clocks = clocks;
  }

  private TracePacket.Builder packet() {
    return TracePacket.newBuilder().setTrustedUid(serviceUid)
        .setTrustedPacketSequenceId(ServiceLimits.SERVICE_SEQUENCE_ID);
  }

  private TracePacket.Builder timestamped(long ts) {
    TracePacket.Builder b = packet().setTimestamp(ts);
    if (clocks.traceClockId() != ClockSource.BUILTIN_CLOCK_BOOTTIME) {
      b.setTimestampClockId(clocks.traceClockId());
    }
    return b;
  }

  byte[] syncMarker() {
    return packet().setSynchronizationMarker(ByteString.copyFrom(SYNC_MARKER)).build().toByteArray();
  }

  byte[] traceConfig(TraceConfig config) {
    return packet().setTraceConfig(config).build().toByteArray();
  }

  byte[] traceUuid(long msb, long lsb) {
    return packet().setTraceUuid(TraceUuid.newBuilder().setMsb(msb).setLsb(lsb)).build().toByteArray();
  }

  /** Which sequences wrote into each of the session's buffers (trace_provenance, as upstream). */
  byte[] traceProvenance(org.jperfetto.protos.TraceProvenance provenance) {
    return timestamped(clocks.now()).setTraceProvenance(provenance).build().toByteArray();
  }

  byte[] clockSnapshot(List<ClockSource.Reading> readings) {
    ClockSnapshot.Builder cs = ClockSnapshot.newBuilder();
    for (ClockSource.Reading r : readings) {
      cs.addClocks(ClockSnapshot.Clock.newBuilder().setClockId(r.clockId()).setTimestamp(r.timestampNs()));
    }
    // As upstream's service: the snapshot names the trace clock, BOOTTIME included.
    org.jperfetto.protos.BuiltinClock primary =
        org.jperfetto.protos.BuiltinClock.forNumber(clocks.traceClockId());
    if (primary != null) {
      cs.setPrimaryTraceClock(primary);
    }
    return packet().setClockSnapshot(cs).build().toByteArray();
  }

  byte[] lifecycleEvent(ServiceSession.LifecycleEvent event) {
    FieldDescriptor field = TracingServiceEvent.getDescriptor().findFieldByNumber(event.fieldNumber());
    TracingServiceEvent.Builder e = TracingServiceEvent.newBuilder();
    e.setField(field, field.getJavaType() == FieldDescriptor.JavaType.BOOLEAN ? (Object) true : 0);
    return timestamped(event.timestampNs()).setServiceEvent(e).build().toByteArray();
  }

  byte[] trigger(ServiceSession.ReceivedTrigger t) {
    return timestamped(t.timestampNs()).setTrigger(org.jperfetto.protos.Trigger.newBuilder()
        .setTriggerName(t.name()).setProducerName(t.producerName())
        .setTrustedProducerUid(t.producerUid()).setStopDelayMs(t.stopDelayMs())).build().toByteArray();
  }

  /** A TracePacket carrying deflated packets (compressed_packets, field 50). */
  byte[] compressed(byte[] deflated) {
    return packet().setCompressedPackets(ByteString.copyFrom(deflated)).build().toByteArray();
  }

  byte[] traceStats(TraceStats stats) {
    return timestamped(clocks.now()).setTraceStats(stats).build().toByteArray();
  }

  byte[] systemInfo() {
    return packet().setSystemInfo(LocalSystemInfo.read()).build().toByteArray();
  }
}
