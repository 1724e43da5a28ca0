package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.service.buffer.TraceBuffer;
import org.junit.jupiter.api.Test;

/** The service's registries and their queries, apart from the parts that drive them. */
class ServiceStateTest {
  private static final int SERVICE_UID = 1000;

  private final ServiceState state = new ServiceState(new ManualTaskRunner(), SERVICE_UID);

  private ConsumerConnection consumer(int uid) {
    return new ConsumerConnection(new ConsumerConnection.ServiceParts(state, null, null, null, null, null, null),
        uid, null);
  }

  private ServiceSession session(int uid, String uniqueName) {
    TraceConfig cfg = TraceConfig.newBuilder().setUniqueSessionName(uniqueName).build();
    return state.newSession(consumer(uid), cfg, new int[0], UUID.randomUUID());
  }

  @Test
  void bufferIdsGoOnPastFreedOnesThenWrapAndReuseThemOnlyWhenFree() {
    TraceBuffer b = TraceBuffer.create(4096, org.jperfetto.service.buffer.OverwritePolicy.RING_BUFFER,
        org.jperfetto.service.buffer.BufferMemory.ZEROED);
    assertEquals(1, state.addBuffer(b));
    assertEquals(2, state.addBuffer(b));
    assertSame(b, state.removeBuffer(1));
    assertEquals(3, state.addBuffer(b), "a freed id is not taken again at once");
    assertNull(state.buffer(1));
    assertSame(b, state.buffer(2));
    for (int i = 4; i <= ServiceState.MAX_ID; i++) {
      state.addBuffer(b);
    }
    assertEquals(ServiceState.MAX_ID - 1, state.bufferCount());
    assertTrue(state.hasIdsForBuffers(1));
    assertFalse(state.hasIdsForBuffers(2));
    assertEquals(1, state.addBuffer(b), "past 65535 the first free id");
    assertThrows(IllegalStateException.class, () -> state.addBuffer(b));
    b.close();
  }

  @Test
  void producerIdsComeFromTheirOwnAllocator() {
    assertEquals(1, state.nextProducerId());
    assertEquals(2, state.nextProducerId());
    TraceBuffer b = TraceBuffer.create(4096, org.jperfetto.service.buffer.OverwritePolicy.DISCARD,
        org.jperfetto.service.buffer.BufferMemory.ZEROED);
    assertEquals(1, state.addBuffer(b), "buffer ids are apart from producer ids");
    b.close();
  }

  @Test
  void aUniqueNameFindsTheFirstLiveSessionOfItButNoClone() {
    ServiceSession clone = session(0, "boot");
    clone.state = ServiceSession.State.CLONED_READ_ONLY;
    assertNull(state.sessionNamed("boot"), "a clone keeps its original's name but does not hold it");
    ServiceSession first = session(0, "boot");
    session(0, "boot");
    assertSame(first, state.sessionNamed("boot"));
    assertNull(state.sessionNamed("other"));
    state.removeSession(first);
    assertEquals(2, state.sessionCount());
    assertNull(state.liveSession(first.id));
    assertEquals(3, state.sessionsCreated(), "removing a session does not take back its id");
  }

  @Test
  void sessionsAreCountedPerConsumerUid() {
    session(10, "");
    session(10, "");
    session(11, "");
    assertEquals(2, state.sessionsOfUid(10));
    assertEquals(1, state.sessionsOfUid(11));
    assertEquals(0, state.sessionsOfUid(0));
  }

  @Test
  void aDetachedSessionIsFoundByItsUidAndKeyOnly() {
    ServiceSession s = session(10, "");
    s.detachKey = "k";
    assertSame(s, state.detachedSession(10, "k"));
    assertNull(state.detachedSession(11, "k"), "another uid's key is not this uid's");
    assertNull(state.detachedSession(10, "other"));
    session(10, "");
    assertSame(s, state.detachedSession(10, "k"), "an attached session has no key");
  }

  @Test
  void lockdownAdmitsOnlyTheServiceUidUntilCleared() {
    ClientIdentity other = new ClientIdentity(2000, 1);
    ClientIdentity own = new ClientIdentity(SERVICE_UID, 2);
    assertTrue(state.admits(other));
    state.applyLockdown(TraceConfig.LockdownModeOperation.LOCKDOWN_SET);
    assertFalse(state.admits(other));
    assertTrue(state.admits(own));
    state.applyLockdown(TraceConfig.LockdownModeOperation.LOCKDOWN_UNCHANGED);
    assertFalse(state.admits(other), "a session that leaves lockdown alone does not end it");
    state.applyLockdown(TraceConfig.LockdownModeOperation.LOCKDOWN_CLEAR);
    assertTrue(state.admits(other));
  }

  @Test
  void theRegistriesAreForTheServiceThreadOnly() throws InterruptedException {
    state.checkThread();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        state.checkThread();
      } catch (IllegalStateException e) {
        thrown.set(e);
      }
    });
    t.start();
    t.join();
    assertTrue(thrown.get() instanceof IllegalStateException);
  }
}
