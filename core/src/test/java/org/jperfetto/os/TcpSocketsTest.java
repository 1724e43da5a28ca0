package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** TCP endpoint addresses told apart from socket paths as upstream does, and a loopback round trip. */
class TcpSocketsTest {
  @Test
  void addressesAreTcpWhenTheyEndInAPort() {
    assertEquals(new TcpSockets.Address("10.0.0.1", 20000), TcpSockets.parse("10.0.0.1:20000"));
    assertEquals(new TcpSockets.Address("::1", 80), TcpSockets.parse("[::1]:80"));
    assertEquals("[::1]:80", TcpSockets.parse("[::1]:80").toString());
    assertEquals(new TcpSockets.Address("localhost", 0), TcpSockets.parse("localhost:0"));
    assertFalse(TcpSockets.isTcp("/run/perfetto/traced-producer.sock"));
    assertFalse(TcpSockets.isTcp("@abstract:1234"), "abstract AF_UNIX names are never TCP");
    assertFalse(TcpSockets.isTcp("/tmp/a:b"));
    assertFalse(TcpSockets.isTcp("host:"));
    assertFalse(TcpSockets.isTcp("host:65536"));
    assertNull(TcpSockets.parse(""));
  }

  @Test
  void loopbackConnectSendReceiveAndNoDescriptors() throws Exception {
    try (UnixSocket listener = TcpSockets.listen("127.0.0.1:0", 4)) {
      assertTrue(listener.isTcp());
      int port = TcpSockets.localPort(listener);
      assertTrue(port > 0);
      assertEquals("127.0.0.1:" + port, listener.address(), "named by the port the kernel chose");
      try (UnixSocket client = TcpSockets.connect(listener.address());
          UnixSocket server = listener.accept();
          Arena arena = Arena.ofConfined()) {
        assertTrue(server.isTcp());
        assertEquals("127.0.0.1", TcpSockets.peer(server).host());
        MemorySegment buf = arena.allocate(16);
        byte[] hello = "hello".getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(MemorySegment.ofArray(hello), 0, buf, 0, hello.length);
        assertEquals(5, client.send(buf, 0, 5, -1));
        MemorySegment in = arena.allocate(16);
        int[] fd = {0};
        assertEquals(5, server.receive(in, 0, 16, fd));
        assertEquals(-1, fd[0]);
        assertEquals("hello", new String(in.asSlice(0, 5).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
            StandardCharsets.US_ASCII));
        assertThrows(ErrnoException.class, () -> client.send(buf, 0, 1, 0), "no fd over TCP");
        assertThrows(ErrnoException.class, server::peerCredentials, "no SO_PEERCRED over TCP");
      }
    }
  }
}
