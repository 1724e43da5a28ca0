package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service's own uid fails closed: an unreadable /proc never makes it root (issue 14). */
class CurrentUidTest {
  @TempDir Path dir;

  @Test
  void readsTheRealUid() throws Exception {
    Path status = dir.resolve("status");
    Files.writeString(status, "Name:\tjtraced\nUid:\t1234\t1235\t1236\t1237\nGid:\t5\n");
    assertEquals(1234, TracingService.uidFromStatus(status));
    assertEquals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"), TracingService.currentUid());
  }

  @Test
  void unreadableOrMissingUidIsAnErrorNotRoot() throws Exception {
    IllegalStateException missing = assertThrows(IllegalStateException.class,
        () -> TracingService.uidFromStatus(dir.resolve("absent")));
    assertTrue(missing.getMessage().contains("absent"), missing.getMessage());
    Path noUid = dir.resolve("no-uid");
    Files.writeString(noUid, "Name:\tjtraced\n");
    assertThrows(IllegalStateException.class, () -> TracingService.uidFromStatus(noUid));
    Path garbled = dir.resolve("garbled");
    Files.writeString(garbled, "Uid:\tx\n");
    assertThrows(IllegalStateException.class, () -> TracingService.uidFromStatus(garbled));
  }
}
