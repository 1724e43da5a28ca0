package org.jperfetto.service;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.jperfetto.protos.TracingServiceEvent;

/**
 * Flushes of a session, on the service thread: the Flush command to every producer with
 * instances that flush, their acks (an ack also acks every earlier request it was part of), the
 * timeout, and the SMB scrape once a flush is over.
 */
final class Flushes {
  private static final System.Logger LOG = System.getLogger(Flushes.class.getName());

  private final ServiceState state;
  private final SessionTasks tasks;
  private final ClockSource clocks;

  Flushes(ServiceState state, SessionTasks tasks, ClockSource clocks) {
    this.state = state;
    this.tasks = tasks;
    this.clocks = clocks;
  }

  /** Flushes session s; done gets whether every producer acked in time (timeoutMs 0: the session's). */
  void flush(ServiceSession s, long timeoutMs, long flags, Consumer<Boolean> done) {
    if (s.pendingFlushes.size() >= ServiceLimits.MAX_PENDING_FLUSHES) {
      if (!s.flushRefusalLogged) {
        s.flushRefusalLogged = true;
        LOG.log(System.Logger.Level.WARNING, "session {0}: flush refused, {1} flushes pending (the limit)",
            s.id, s.pendingFlushes.size());
      }
      done.accept(false);
      return;
    }
    long requestId = state.nextFlushRequestId();
    ServiceSession.PendingFlush f = new ServiceSession.PendingFlush(requestId, done);
    s.flushesRequested++;
    s.addLifecycleEvent(TracingServiceEvent.FLUSH_STARTED_FIELD_NUMBER, clocks.now());
    Map<Integer, List<Long>> byProducer = new TreeMap<>();
    if (s.state == ServiceSession.State.STARTED) {
      for (SessionDataSource inst : s.instances) {
        if (!inst.descriptor.getNoFlush() && inst.state != SessionDataSource.State.STOPPED) {
          byProducer.computeIfAbsent(inst.producerId, k -> new ArrayList<>()).add(inst.instanceId);
        }
      }
    }
    s.pendingFlushes.put(requestId, f);
    f.producersPending.addAll(byProducer.keySet());
    for (Map.Entry<Integer, List<Long>> e : byProducer.entrySet()) {
      long[] ids = e.getValue().stream().mapToLong(Long::longValue).toArray();
      state.producer(e.getKey()).callbacks.flush(requestId, ids, flags);
    }
    if (s.pendingFlushes.get(requestId) != f) {
      return; // every producer acked from within its flush callback
    }
    if (f.producersPending.isEmpty()) {
      complete(s, f, true);
      return;
    }
    f.timeout = tasks.after(timeoutMs > 0 ? timeoutMs : s.flushTimeoutMs(), s,
        live -> live.pendingFlushes.get(requestId) == f, live -> {
          LOG.log(System.Logger.Level.INFO, "session {0}: flush {1} timed out waiting for producers {2}",
              live.id, requestId, f.producersPending);
          complete(live, f, false);
        });
  }

  /** Producer producerId acked flush requestId, which also acks every earlier request it was part of. */
  void acked(int producerId, long requestId) {
    for (ServiceSession s : List.copyOf(state.sessions())) {
      for (ServiceSession.PendingFlush f : List.copyOf(s.pendingFlushes.values())) {
        if (f.requestId <= requestId && f.producersPending.remove(producerId)
            && f.producersPending.isEmpty()) {
          complete(s, f, true);
        }
      }
    }
  }

  /** Producer producerId went away: session s's flushes no longer wait for it. */
  void producerGone(ServiceSession s, int producerId) {
    for (ServiceSession.PendingFlush f : List.copyOf(s.pendingFlushes.values())) {
      if (f.producersPending.remove(producerId) && f.producersPending.isEmpty()) {
        complete(s, f, true);
      }
    }
  }

  /** Session s is freed: its flushes are dropped, their callbacks never run. */
  static void cancelAll(ServiceSession s) {
    for (ServiceSession.PendingFlush f : s.pendingFlushes.values()) {
      SessionTasks.cancel(f.timeout);
    }
    s.pendingFlushes.clear();
  }

  private void complete(ServiceSession s, ServiceSession.PendingFlush f, boolean success) {
    s.pendingFlushes.remove(f.requestId);
    SessionTasks.cancel(f.timeout);
    scrapeProducersOf(s);
    if (success) {
      s.flushesSucceeded++;
    } else {
      s.flushesFailed++;
    }
    s.addLifecycleEvent(TracingServiceEvent.ALL_DATA_SOURCES_FLUSHED_FIELD_NUMBER, clocks.now());
    f.done.accept(success);
  }

  /** Copies what the producers of s's instances wrote but did not commit (once per instance). */
  void scrapeProducersOf(ServiceSession s) {
    for (SessionDataSource inst : s.instances) {
      ProducerConnection p = state.producer(inst.producerId);
      if (p != null) {
        p.scrapeSharedMemory();
      }
    }
  }
}
