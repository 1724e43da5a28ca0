package org.jperfetto.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.protos.TracePacket;
import org.junit.jupiter.api.Test;

class TraceFileReaderTest {
  @Test
  void handsBackWhatTheWriterWroteInOrderAndSkipsOtherFields() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<TracePacket> written = new ArrayList<>();
    try (TraceFileWriter writer = new TraceFileWriter(bytes)) {
      for (int i = 0; i < 3; i++) {
        TracePacket p = TracePacket.newBuilder().setTimestamp(1000 + i).build();
        written.add(p);
        writer.onPacket(List.of(p.toByteString()), p.getSerializedSize());
        writer.flush();
        // A field of Trace other than packet (here field 2, a varint) between packets.
        CodedOutputStream extra = CodedOutputStream.newInstance(bytes);
        extra.writeUInt64(2, 7);
        extra.flush();
      }
    }
    List<TracePacket> read = new ArrayList<>();
    TraceFileReader.forEachPacket(new ByteArrayInputStream(bytes.toByteArray()), read::add);
    assertEquals(written, read);
  }

  @Test
  void packetsLargerThanTheReadBufferComeWhole() throws IOException {
    TracePacket big = TracePacket.newBuilder()
        .setSynchronizationMarker(ByteString.copyFrom(new byte[200_000])).build();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TraceFileWriter writer = new TraceFileWriter(bytes)) {
      writer.onPacket(List.of(big.toByteString()), big.getSerializedSize());
    }
    List<TracePacket> read = new ArrayList<>();
    TraceFileReader.forEachPacket(new ByteArrayInputStream(bytes.toByteArray()), read::add);
    assertEquals(List.of(big), read);
  }
}
