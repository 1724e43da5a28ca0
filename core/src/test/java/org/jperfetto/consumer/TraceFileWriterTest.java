package org.jperfetto.consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;

class TraceFileWriterTest {
  @Test
  void writesEachPacketAsTraceField1() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<byte[]> packets = FakeTraced.defaultPackets(5);
    try (TraceFileWriter writer = new TraceFileWriter(bytes)) {
      for (byte[] p : packets) {
        writer.onPacket(List.of(ByteString.copyFrom(p)), p.length);
      }
      assertEquals(5, writer.packetsWritten());
    }
    Trace trace = Trace.parseFrom(bytes.toByteArray());
    assertEquals(5, trace.getPacketCount());
    for (int i = 0; i < 5; i++) {
      assertArrayEquals(packets.get(i), trace.getPacket(i).toByteArray());
    }
  }

  @Test
  void preambleIsTagThenVarintSize() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    byte[] big = new byte[300];
    TraceFileWriter writer = new TraceFileWriter(bytes);
    writer.onPacket(List.of(ByteString.copyFrom(big, 0, 100), ByteString.copyFrom(big, 100, 200)), 300);
    writer.close();
    byte[] out = bytes.toByteArray();
    assertEquals(0x0A, out[0]);
    assertEquals((byte) 0xAC, out[1]); // 300 = 0b10_0101100
    assertEquals(0x02, out[2]);
    assertEquals(303, out.length);
    assertEquals(303, writer.bytesWritten());
  }

  @Test
  void sizeMismatchIsAnError() {
    TraceFileWriter writer = new TraceFileWriter(new ByteArrayOutputStream());
    IOException e = assertThrows(IOException.class,
        () -> writer.onPacket(List.of(ByteString.copyFromUtf8("abc")), 4));
    assertEquals("packet size mismatch: declared=4 slices=3", e.getMessage());
  }

  @Test
  void assemblerJoinsSlicesAcrossResponsesAndPassesSingleSlicesThrough() throws IOException {
    List<List<ByteString>> seen = new ArrayList<>();
    PacketAssembler assembler = new PacketAssembler((slices, size) -> seen.add(slices));
    ByteString one = TracePacket.newBuilder().setTimestamp(1).build().toByteString();
    var r1 = org.jperfetto.protos.ReadBuffersResponse.newBuilder()
        .addSlices(slice(one, true))
        .addSlices(slice(ByteString.copyFromUtf8("ab"), false)).build();
    var r2 = org.jperfetto.protos.ReadBuffersResponse.newBuilder()
        .addSlices(slice(ByteString.copyFromUtf8("cd"), false))
        .addSlices(slice(ByteString.copyFromUtf8("e"), true)).build();
    assembler.accept(r1);
    assertEquals(1, seen.size());
    assertEquals(1, assembler.danglingSlices());
    assembler.accept(r2);
    assertEquals(2, seen.size());
    assertEquals(List.of(one), seen.get(0));
    assertEquals(ByteString.copyFromUtf8("abcde"), ByteString.copyFrom(seen.get(1)));
    assertEquals(0, assembler.danglingSlices());
    assertEquals(2, assembler.packets());
  }

  private static org.jperfetto.protos.ReadBuffersResponse.Slice slice(ByteString data, boolean last) {
    return org.jperfetto.protos.ReadBuffersResponse.Slice.newBuilder().setData(data)
        .setLastSliceForPacket(last).build();
  }
}
