package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Byte streams survive any chunking, over native and heap segments; address lengths hold exactly. */
@SuppressWarnings("try") // some resources exist only to be held open and closed
class UnixSocketProperties {

  @Property(tries = 60)
  void bytesSurviveAnyChunking(@ForAll @Size(max = 40_000) byte[] payload,
      @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 1, max = 9000) Integer> chunks,
      @ForAll boolean heapSender, @ForAll boolean heapReceiver) throws Exception {
    streamRoundTrip(payload, chunks, heapSender, heapReceiver);
  }

  @Tag("stress")
  @Property(tries = 500)
  void bytesSurviveAnyChunkingLong(@ForAll @Size(max = 400_000) byte[] payload,
      @ForAll @Size(min = 1, max = 16) List<@IntRange(min = 1, max = 200_000) Integer> chunks,
      @ForAll boolean heapSender, @ForAll boolean heapReceiver) throws Exception {
    streamRoundTrip(payload, chunks, heapSender, heapReceiver);
  }

  /** Sender on another thread writes in the given chunk sizes; receiver reads in the same cycle of sizes. */
  private static void streamRoundTrip(byte[] payload, List<Integer> chunks, boolean heapSender,
      boolean heapReceiver) throws Exception {
    UnixSocket[] p = UnixSocket.pair();
    try (UnixSocket a = p[0]; UnixSocket b = p[1]; Arena arena = Arena.ofShared()) {
      MemorySegment src = heapSender ? MemorySegment.ofArray(payload.clone())
          : arena.allocateFrom(ValueLayout.JAVA_BYTE, payload);
      MemorySegment dst = heapReceiver ? MemorySegment.ofArray(new byte[payload.length])
          : arena.allocate(payload.length);
      Thread sender = Thread.ofPlatform().start(() -> {
        try {
          long at = 0;
          for (int i = 0; at < payload.length; i++) {
            long n = a.send(src, at, Math.min(chunks.get(i % chunks.size()), payload.length - at), -1);
            assertTrue(n > 0);
            at += n;
          }
        } catch (ErrnoException e) {
          throw new AssertionError(e);
        } finally {
          a.close(); // EOF for the receiver, whatever happened here
        }
      });
      long at = 0;
      for (int i = 0; at < payload.length; i++) {
        long room = Math.min(chunks.get(i % chunks.size()), payload.length - at);
        long n = b.receive(dst, at, room, null);
        assertTrue(n > 0 && n <= room, "n=" + n + " room=" + room + " at=" + at);
        at += n;
      }
      assertEquals(0, b.receive(arena.allocate(1), 0, 1, null), "EOF after exactly the payload");
      sender.join(10_000);
      assertArrayEquals(payload, dst.asSlice(0, payload.length).toArray(ValueLayout.JAVA_BYTE));
    }
  }

  @Provide
  Arbitrary<String> abstractNames() {
    return Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(107);
  }

  @Property(tries = 40)
  void abstractNamesUpTo107BytesWork(@ForAll("abstractNames") String suffix) throws Exception {
    String name = "@" + suffix;
    try (UnixSocket l = UnixSocket.listen(name, 1); UnixSocket c = UnixSocket.connect(name);
        UnixSocket s = l.accept()) {
      assertEquals(ProcessHandle.current().pid(), s.peerCredentials().pid());
    } catch (ErrnoException e) {
      // another test process may hold the same random name
      assertEquals(Errno.EADDRINUSE, e.errno(), e.getMessage());
    }
  }

  @Property(tries = 10)
  void namesOver107BytesAreRefused(@ForAll @IntRange(min = 108, max = 300) int length) {
    ErrnoException e = assertThrows(ErrnoException.class, () -> UnixSocket.connect("@" + "n".repeat(length)));
    assertEquals(Errno.ENAMETOOLONG, e.errno());
  }
}
