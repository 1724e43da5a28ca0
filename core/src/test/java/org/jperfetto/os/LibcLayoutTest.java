package org.jperfetto.os;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import org.junit.jupiter.api.Test;

/**
 * The hand-written struct offsets in {@link Libc} against the C rules (natural alignment, LP64),
 * playing the part of static_asserts.
 */
class LibcLayoutTest {

  @Test
  void msghdrFollowsNaturalAlignment() {
    StructLayout msghdr = MemoryLayout.structLayout(
        ADDRESS.withName("name"), JAVA_INT.withName("namelen"), MemoryLayout.paddingLayout(4),
        ADDRESS.withName("iov"), JAVA_LONG.withName("iovlen"),
        ADDRESS.withName("control"), JAVA_LONG.withName("controllen"),
        JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4));
    assertEquals(msghdr.byteSize(), Libc.MSGHDR_BYTES);
    assertEquals(msghdr.byteOffset(groupElement("name")), Libc.MSG_NAME);
    assertEquals(msghdr.byteOffset(groupElement("namelen")), Libc.MSG_NAMELEN);
    assertEquals(msghdr.byteOffset(groupElement("iov")), Libc.MSG_IOV);
    assertEquals(msghdr.byteOffset(groupElement("iovlen")), Libc.MSG_IOVLEN);
    assertEquals(msghdr.byteOffset(groupElement("control")), Libc.MSG_CONTROL);
    assertEquals(msghdr.byteOffset(groupElement("controllen")), Libc.MSG_CONTROLLEN);
    assertEquals(msghdr.byteOffset(groupElement("flags")), Libc.MSG_FLAGS);
  }

  @Test
  void cmsgAndSockaddrAndUcred() {
    StructLayout cmsg = MemoryLayout.structLayout(
        JAVA_LONG.withName("len"), JAVA_INT.withName("level"), JAVA_INT.withName("type"));
    assertEquals(cmsg.byteSize(), Libc.CMSG_HEADER_BYTES);
    assertEquals(cmsg.byteOffset(groupElement("level")), Libc.CMSG_LEVEL);
    assertEquals(cmsg.byteOffset(groupElement("type")), Libc.CMSG_TYPE);
    // CMSG_SPACE(4 * MAX_FDS) is 8-aligned and has room for the fds
    assertEquals(0, Scratch.CONTROL_BYTES % 8);
    assertTrue(Scratch.CONTROL_BYTES >= Libc.CMSG_HEADER_BYTES + 4L * Scratch.MAX_FDS_PER_MESSAGE);

    StructLayout sun = MemoryLayout.structLayout(JAVA_SHORT.withName("family"),
        MemoryLayout.sequenceLayout(108, java.lang.foreign.ValueLayout.JAVA_BYTE).withName("path"));
    assertEquals(sun.byteSize(), Libc.SOCKADDR_UN_BYTES);
    assertEquals(3 * 4, Libc.UCRED_BYTES);
  }

  @Test
  void epollEventIsPackedOnlyOnX86() {
    String arch = System.getProperty("os.arch");
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      assertEquals(12, Libc.EPOLL_EVENT_BYTES);
      assertEquals(4, Libc.EPOLL_DATA);
    } else {
      assertEquals(16, Libc.EPOLL_EVENT_BYTES);
      assertEquals(8, Libc.EPOLL_DATA);
    }
  }

  @Test
  void errnoIsCapturable() {
    assertTrue(java.lang.foreign.Linker.Option.captureStateLayout().memberLayouts().stream()
        .anyMatch(l -> l.name().orElse("").equals("errno")));
  }
}
