package org.jperfetto.service;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jperfetto.service.buffer.BufferedPacket;
import org.jperfetto.wire.ProtoWire;

/**
 * Checks a producer's packet before the service hands it out: its top-level fields must be well
 * formed protobuf (no truncated field, no group or unknown wire type, no length over 2^28-1) and
 * none may be a field only the service writes (upstream's PacketStreamValidator list): trusted
 * uid/pid/sequence id, trace config and stats, service events, compressed packets, sync marker,
 * machine id, provenance, protovms. Fields are scanned across the packet's slices, one byte at a
 * time where they straddle a slice boundary; nothing is allocated and nothing is read outside the
 * slices.
 */
final class PacketValidator {
  /** TracePacket field numbers reserved for the service. */
  static final int[] RESERVED_FIELDS = {
      3, // trusted_uid
      10, // trusted_packet_sequence_id
      33, // trace_config
      35, // trace_stats
      50, // compressed_packets
      133, // zstd_compressed_packets
      36, // synchronization_marker
      79, // trusted_pid
      98, // machine_id
      69, // service_event
      124, // trace_provenance
      125, // protovms
  };

  private static final long MAX_MESSAGE_LENGTH = (1L << 28) - 1;

  private enum State { PREAMBLE, VARINT_VALUE, LENGTH }

  private PacketValidator() {}

  /** True if the packet may be handed out. */
  static boolean validate(BufferedPacket packet) {
    MemorySegment seg = packet.segment();
    State state = State.PREAMBLE;
    long varint = 0;
    int shift = 0;
    long skip = 0;
    for (int s = 0; s < packet.sliceCount(); s++) {
      long p = packet.sliceOffset(s);
      long end = p + packet.sliceLength(s);
      while (p < end) {
        if (skip > 0) {
          long n = Math.min(skip, end - p);
          skip -= n;
          p += n;
          continue;
        }
        // A varint here may run across two slices, so it is decoded a byte at a time with its
        // state kept between bytes, unlike the toolkit's reads of a varint in one place.
        int b = seg.get(ValueLayout.JAVA_BYTE, p++);
        if (shift >= 64) {
          return false;
        }
        varint |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) != 0) {
          shift += 7;
          continue;
        }
        long value = varint;
        varint = 0;
        shift = 0;
        switch (state) {
          case PREAMBLE -> {
            int wireType = (int) (value & 7);
            long field = value >>> 3;
            if (isReserved(field)) {
              return false;
            }
            switch (wireType) {
              case ProtoWire.WIRE_TYPE_VARINT -> state = State.VARINT_VALUE;
              case ProtoWire.WIRE_TYPE_FIXED64 -> skip = Long.BYTES;
              case ProtoWire.WIRE_TYPE_LENGTH_DELIMITED -> state = State.LENGTH;
              case ProtoWire.WIRE_TYPE_FIXED32 -> skip = Integer.BYTES;
              default -> {
                return false;
              }
            }
          }
          case VARINT_VALUE -> state = State.PREAMBLE;
          case LENGTH -> {
            // Unsigned: a 10-byte varint can set bit 63, and a negative skip would read the
            // field's contents as more fields.
            if (Long.compareUnsigned(value, MAX_MESSAGE_LENGTH) > 0) {
              return false;
            }
            skip = value;
            state = State.PREAMBLE;
          }
          default -> throw new IllegalStateException("unknown validator state " + state);
        }
      }
    }
    return state == State.PREAMBLE && shift == 0 && skip == 0;
  }

  private static boolean isReserved(long field) {
    for (int f : RESERVED_FIELDS) {
      if (f == field) {
        return true;
      }
    }
    return false;
  }
}
