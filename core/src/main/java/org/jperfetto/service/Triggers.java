package org.jperfetto.service;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TraceConfig.TriggerConfig.TriggerMode;

/**
 * Trigger configs, on the service thread: ActivateTriggers from producers, which start
 * (START_TRACING), stop (STOP_TRACING) or announce a snapshot of (CLONE_SNAPSHOT) the sessions
 * whose trigger_config names them. The timeouts of sessions waiting for a trigger are
 * {@link SessionLifecycle}'s, with the session's other timers.
 */
final class Triggers {
  private static final long DAY_NS = 24L * 3600 * 1_000_000_000L;

  private final ServiceState state;
  private final SessionLifecycle lifecycle;
  private final SessionTasks tasks;
  private final ClockSource clocks;
  /** Trigger hits over the last 24 h, for max_per_24_h: {name hash, timestamp ns}. */
  private final ArrayDeque<long[]> history = new ArrayDeque<>();
  private final Random random = new Random();

  Triggers(ServiceState state, SessionLifecycle lifecycle, SessionTasks tasks, ClockSource clocks) {
    this.state = state;
    this.lifecycle = lifecycle;
    this.tasks = tasks;
    this.clocks = clocks;
  }

  /** ActivateTriggers from producer p: starts, stops or snapshots the sessions that wait for them. */
  void activate(ProducerConnection p, List<String> names) {
    long now = clocks.now();
    while (!history.isEmpty() && now - history.peekFirst()[1] > DAY_NS) {
      history.pollFirst();
    }
    for (String name : names) {
      boolean matched = false;
      for (ServiceSession s : List.copyOf(state.sessions())) {
        TriggerMode mode = s.triggerMode();
        if (mode == TriggerMode.UNSPECIFIED
            || s.state == ServiceSession.State.CLONED_READ_ONLY
            || s.state == ServiceSession.State.DISABLED) {
          continue;
        }
        for (TraceConfig.TriggerConfig.Trigger t : s.config.getTriggerConfig().getTriggersList()) {
          if (!t.getName().equals(name) || !producerNameMatches(t.getProducerNameRegex(), p.name)
              || (t.getSkipProbability() > 0 && random.nextDouble() < t.getSkipProbability())
              || (t.getMaxPer24H() > 0 && hitsInLastDay(name) >= t.getMaxPer24H())) {
            continue;
          }
          matched = true;
          onTrigger(s, mode, new ServiceSession.ReceivedTrigger(name, p.name, p.identity.uid(),
              Integer.toUnsignedLong(t.getStopDelayMs()), now));
          break;
        }
      }
      if (matched) {
        history.addLast(new long[] {name.hashCode(), now});
      }
    }
  }

  private static boolean producerNameMatches(String regex, String producerName) {
    try {
      return regex.isEmpty() || Pattern.compile(regex).matcher(producerName).matches();
    } catch (PatternSyntaxException e) {
      return false; // refused at enable time
    }
  }

  private int hitsInLastDay(String name) {
    int n = 0;
    for (long[] h : history) {
      if (h[0] == name.hashCode()) {
        n++;
      }
    }
    return n;
  }

  private void onTrigger(ServiceSession s, TriggerMode mode, ServiceSession.ReceivedTrigger t) {
    boolean first = s.receivedTriggers.isEmpty();
    s.receivedTriggers.add(t);
    switch (mode) {
      case START_TRACING -> {
        if (s.state == ServiceSession.State.CONFIGURED) {
          SessionTasks.cancel(s.triggerTimer);
          // The trigger's stop_delay_ms becomes the trace duration.
          s.config = s.config.toBuilder().setDurationMs((int) t.stopDelayMs()).build();
          lifecycle.startTracing(s);
        }
      }
      case STOP_TRACING -> {
        if (first) {
          tasks.after(t.stopDelayMs(), s, SessionTasks.in(ServiceSession.State.STARTED),
              lifecycle::flushAndDisable);
        }
      }
      case CLONE_SNAPSHOT -> tasks.after(t.stopDelayMs(), s, SessionTasks.always(), live -> {
        ConsumerConnection c = live.consumer;
        if (c != null && c.observes(ObservableEvents.Type.TYPE_CLONE_TRIGGER_HIT)) {
          c.callbacks.onObservableEvents(ObservableEvents.newBuilder().setCloneTriggerHit(
              ObservableEvents.CloneTriggerHit.newBuilder().setTracingSessionId(live.id)
                  .setTriggerName(t.name()).setProducerName(t.producerName())
                  .setProducerUid(t.producerUid()).setBootTimeNs(t.timestampNs())
                  .setTriggerDelayMs(t.stopDelayMs())).build());
        }
      });
      default -> { }
    }
  }
}
