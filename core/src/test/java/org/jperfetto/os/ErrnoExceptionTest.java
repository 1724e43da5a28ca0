package org.jperfetto.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class ErrnoExceptionTest {

  @Test
  void messageNamesCallSubjectAndErrno() {
    ErrnoException e = new ErrnoException("sendmsg", Errno.EPIPE, "fd 7");
    assertEquals("sendmsg(fd 7): EPIPE (broken pipe)", e.getMessage());
    assertEquals("sendmsg", e.call());
    assertEquals(32, e.errno());
    assertEquals("EPIPE", e.errnoName());
    assertFalse(e.isWouldBlock());
    assertTrue(e instanceof IOException);
  }

  @Test
  void wouldBlockIsEagain() {
    assertEquals(Errno.EAGAIN, Errno.EWOULDBLOCK);
    assertTrue(new ErrnoException("recvmsg", 11).isWouldBlock());
    assertEquals("recvmsg: EAGAIN (resource temporarily unavailable)", new ErrnoException("recvmsg", 11).getMessage());
  }

  @Test
  void unknownErrnoStillReadable() {
    assertEquals("errno 300", Errno.name(300));
    assertEquals("errno -1", Errno.name(-1));
    assertEquals("unknown error", Errno.description(126));
    assertEquals("connect: errno 300 (unknown error)", new ErrnoException("connect", 300).getMessage());
  }

  @Test
  void linuxValuesOfTheErrnosCallersCompare() {
    assertEquals(1, Errno.EPERM);
    assertEquals(2, Errno.ENOENT);
    assertEquals(4, Errno.EINTR);
    assertEquals(9, Errno.EBADF);
    assertEquals(32, Errno.EPIPE);
    assertEquals(104, Errno.ECONNRESET);
    assertEquals(111, Errno.ECONNREFUSED);
  }
}
