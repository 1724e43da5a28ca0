package org.jperfetto.protos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class WireProtocolTest {
  @Test
  void invokeMethodFieldNumbersMatchUpstream() throws Exception {
    IPCFrame frame = IPCFrame.newBuilder()
        .setRequestId(7)
        .setMsgInvokeMethod(IPCFrame.InvokeMethod.newBuilder()
            .setServiceId(1).setMethodId(4).setArgsProto(ByteString.copyFrom(new byte[] {9}))
            .setDropReply(true))
        .build();
    // request_id = 2 (varint), msg_invoke_method = 5 (len) {1:1, 2:4, 3:"\x09", 4:true}
    byte[] expected = {0x10, 0x07, 0x2a, 0x09, 0x08, 0x01, 0x10, 0x04, 0x1a, 0x01, 0x09, 0x20, 0x01};
    assertEquals(ByteString.copyFrom(expected), frame.toByteString());
    assertEquals(frame, IPCFrame.parseFrom(expected));
  }
}
