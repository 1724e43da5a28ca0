package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jperfetto.os.ErrnoException;
import org.jperfetto.os.Fds;
import org.jperfetto.os.MemFd;
import org.jperfetto.protos.InitializeConnectionRequest;
import org.jperfetto.service.SharedMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Service-made SMBs are sealed; producer-made ones are adopted only when sealed and valid. */
@Timeout(30)
class MemfdSharedMemoryIT {
  @TempDir java.nio.file.Path dir;

  @Test
  void createdSmbIsSealedAgainstResizing() throws Exception {
    try (MemfdSharedMemory smb = MemfdSharedMemory.create(256 * 1024)) {
      assertTrue(MemFd.hasSeals(smb.fd(), MemfdSharedMemory.REQUIRED_SEALS));
      assertEquals(256 * 1024, smb.size());
      assertEquals(0, smb.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, 8192));
      assertThrows(ErrnoException.class, () -> MemFd.resize(smb.fd(), 4096));
    }
  }

  @Test
  void unsealedOrOddSizedProducerSmbIsRefused() throws Exception {
    int unsealed = MemFd.create("p", 64 * 1024);
    assertTrue(MemfdSharedMemory.adoptFromProducer(unsealed).isEmpty());
    int odd = MemFd.create("p", 5000);
    MemFd.addSeals(odd, MemfdSharedMemory.REQUIRED_SEALS);
    assertTrue(MemfdSharedMemory.adoptFromProducer(odd).isEmpty());
    int good = MemFd.create("p", 64 * 1024);
    MemFd.addSeals(good, MemfdSharedMemory.REQUIRED_SEALS);
    try (SharedMemory smb = MemfdSharedMemory.adoptFromProducer(good).orElseThrow()) {
      assertEquals(64 * 1024, smb.size());
    }
  }

  @Test
  void producerProvidedSmbOverTheSocket() throws Exception {
    String p = dir.resolve("p.sock").toString();
    try (ServiceHost host = ServiceHost.start(ServiceHost.Options.of(p, dir.resolve("c.sock").toString()))) {
      int fd = MemFd.create("mine", 128 * 1024);
      MemFd.addSeals(fd, MemfdSharedMemory.REQUIRED_SEALS);
      InitializeConnectionRequest req = InitializeConnectionRequest.newBuilder().setProducerName("own-smb")
          .setProducerProvidedShmem(true).setSharedMemorySizeHintBytes(128 * 1024)
          .setSharedMemoryPageSizeHintBytes(4096).build();
      try (SocketProducer sealed = SocketProducer.connect(p, req, Fds.dup(fd))) {
        assertTrue(sealed.init.getUsingShmemProvidedByProducer());
        assertTrue(sealed.init.getDirectSmbPatchingSupported());
      }
      Fds.close(fd);
      int loose = MemFd.create("loose", 128 * 1024);
      try (SocketProducer unsealed = SocketProducer.connect(p, req, loose)) {
        assertFalse(unsealed.init.getUsingShmemProvidedByProducer());
      }
      SessionIT.waitFor(() -> host.connectedProducers() == 0);
    }
  }
}
