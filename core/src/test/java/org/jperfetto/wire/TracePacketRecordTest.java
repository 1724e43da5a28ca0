package org.jperfetto.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;

class TracePacketRecordTest {
  @Test
  void headerIsTheTagThenTheSizeAsAVarint() {
    assertArrayEquals(new byte[] {0x0A, 0}, TracePacketRecord.header(0));
    assertArrayEquals(new byte[] {0x0A, 0x7F}, TracePacketRecord.header(127));
    assertArrayEquals(new byte[] {0x0A, (byte) 0x80, 0x01}, TracePacketRecord.header(128));
    assertArrayEquals(new byte[] {0x0A, (byte) 0xAC, 0x02}, TracePacketRecord.header(300));
    assertEquals(TracePacketRecord.MAX_HEADER_SIZE, TracePacketRecord.header(Integer.MAX_VALUE).length);
    byte[] out = new byte[2 + TracePacketRecord.MAX_HEADER_SIZE];
    assertEquals(2 + 3, TracePacketRecord.putHeader(out, 2, 300));
    assertEquals(0x0A, out[2]);
  }

  @Test
  void fieldNumberIsTheGeneratedOne() {
    assertEquals(Trace.PACKET_FIELD_NUMBER, TracePacketRecord.PACKET_FIELD_NUMBER);
  }

  @Test
  void recordsParseAsATrace() throws Exception {
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    TracePacket a = TracePacket.newBuilder().setTimestamp(1).build();
    TracePacket b = TracePacket.newBuilder().setTimestamp(2).setTrustedUid(7)
        .setSynchronizationMarker(ByteString.copyFrom(new byte[200])).build();
    for (TracePacket p : new TracePacket[] {a, b}) {
      file.writeBytes(TracePacketRecord.header(p.getSerializedSize()));
      file.writeBytes(p.toByteArray());
    }
    Trace trace = Trace.parseFrom(file.toByteArray());
    assertEquals(java.util.List.of(a, b), trace.getPacketList());
  }

  @Test
  void aNegativeSizeIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TracePacketRecord.header(-1));
    assertEquals("negative packet size: -1", e.getMessage());
  }
}
