package org.jperfetto.service;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jperfetto.abi.ShmSizes;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.ObservableEvents;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceEvent;

/**
 * Producers' data sources, on the service thread: registering, updating and unregistering them,
 * and their instances in sessions (set up, started, stopped, gone with their producer), with the
 * ObservableEvents a consumer asked for about them. The session's own lifecycle is
 * {@link SessionLifecycle}'s; it hears from here when a stopping session's last instance stopped.
 */
final class DataSources {
  private static final System.Logger LOG = System.getLogger(DataSources.class.getName());

  private final ServiceState state;
  private final ServiceQueries counters;
  private final Flushes flushes;
  private final SharedMemory.Factory shmFactory;
  private final ClockSource clocks;
  /** A session waiting for stop acks lost or stopped an instance: it may be done stopping. */
  private final Consumer<ServiceSession> stopAcked;

  DataSources(ServiceState state, ServiceQueries counters, Flushes flushes, SharedMemory.Factory shmFactory,
      ClockSource clocks, Consumer<ServiceSession> stopAcked) {
    this.state = state;
    this.counters = counters;
    this.flushes = flushes;
    this.shmFactory = shmFactory;
    this.clocks = clocks;
    this.stopAcked = stopAcked;
  }

  // ---------------------------------------------------------------------------------------------
  // Registrations

  /** RegisterDataSource from p: "" or why it is refused. */
  String register(ProducerConnection p, DataSourceDescriptor d) {
    if (d.getName().isEmpty()) {
      return "data source with an empty name: producer=" + p.id;
    }
    // As upstream: a producer may register several data sources of one name (a process with two
    // libraries, each with its own track_event), and every session gets an instance of each; only
    // a non-zero id already taken on this producer is refused (id 0: a producer that sets none).
    int registered = 0;
    long bytes = d.getSerializedSize();
    for (RegisteredDataSource r : state.dataSources()) {
      if (r.producerId() != p.id) {
        continue;
      }
      if (d.getId() != 0 && r.descriptor().getId() == d.getId()) {
        return "data source \"" + d.getName() + "\" has the id " + d.getId()
            + " of data source \"" + r.descriptor().getName() + "\" already registered: producer=" + p.id;
      }
      registered++;
      bytes += r.descriptor().getSerializedSize();
    }
    int maxCount = ServiceLimits.MAX_DATA_SOURCES_PER_PRODUCER;
    long maxBytes = ServiceLimits.MAX_DESCRIPTOR_BYTES_PER_PRODUCER;
    if (registered >= maxCount || bytes > maxBytes) {
      return refuse(p, d, registered >= maxCount
          ? "it has " + registered + " data sources registered, the limit is " + maxCount
          : "its descriptors would take " + bytes + " bytes, the limit is " + maxBytes);
    }
    state.addDataSource(new RegisteredDataSource(p.id, d));
    counters.countDataSourceRegistered();
    for (ServiceSession s : state.sessions()) {
      if (s.state != ServiceSession.State.CONFIGURED && s.state != ServiceSession.State.STARTED) {
        continue;
      }
      for (TraceConfig.DataSource cfg : s.config.getDataSourcesList()) {
        if (cfg.getConfig().getName().equals(d.getName())) {
          SessionDataSource inst = setUp(s, cfg, p, d);
          if (inst != null && s.state == ServiceSession.State.STARTED) {
            start(s, p, inst);
          }
        }
      }
    }
    return "";
  }

  /**
   * Counts and says why a registration (or a descriptor's update) is refused; the first refusal of
   * a producer is logged, the next ones only counted, so a producer that keeps trying cannot
   * flood the log.
   */
  private String refuse(ProducerConnection p, DataSourceDescriptor d, String why) {
    counters.countDataSourceRefused();
    String error = "data source \"" + d.getName() + "\" refused for producer " + p.id + " (\"" + p.name
        + "\"): " + why;
    if (p.firstRefusal()) {
      LOG.log(System.Logger.Level.WARNING, error);
    }
    return error;
  }

  /** UnregisterDataSource from p: its instances of that name end, then the first registration goes. */
  void unregister(ProducerConnection p, String name) {
    for (ServiceSession s : state.sessions()) {
      for (SessionDataSource inst : List.copyOf(s.instances)) {
        if (inst.producerId == p.id && inst.name().equals(name)) {
          if (inst.state == SessionDataSource.State.STARTED
              || inst.state == SessionDataSource.State.STARTING
              || inst.state == SessionDataSource.State.CONFIGURED) {
            p.callbacks.stopDataSource(inst.instanceId);
          }
          s.instances.remove(inst);
          p.disallowTargetBuffer(inst.config.getTargetBuffer());
        }
      }
      if (s.state == ServiceSession.State.DISABLING_WAITING_STOP_ACKS) {
        stopAcked.accept(s);
      }
    }
    List<RegisteredDataSource> registered = state.dataSources();
    for (int i = 0; i < registered.size(); i++) {
      RegisteredDataSource r = registered.get(i);
      if (r.producerId() == p.id && r.descriptor().getName().equals(name)) {
        state.removeDataSource(i);
        return;
      }
    }
  }

  /** UpdateDataSource from p: replaces the descriptor of the same id (or name, with id 0). */
  void update(ProducerConnection p, DataSourceDescriptor d) {
    int index = -1;
    long bytes = d.getSerializedSize();
    List<RegisteredDataSource> registered = state.dataSources();
    for (int i = 0; i < registered.size(); i++) {
      RegisteredDataSource r = registered.get(i);
      if (r.producerId() != p.id) {
        continue;
      }
      boolean same = d.getId() != 0 ? r.descriptor().getId() == d.getId()
          : r.descriptor().getName().equals(d.getName());
      if (same && index < 0) {
        index = i;
      } else {
        bytes += r.descriptor().getSerializedSize();
      }
    }
    if (index < 0) {
      return;
    }
    if (bytes > ServiceLimits.MAX_DESCRIPTOR_BYTES_PER_PRODUCER) {
      refuse(p, d, "its descriptors would take " + bytes + " bytes, the limit is "
          + ServiceLimits.MAX_DESCRIPTOR_BYTES_PER_PRODUCER + "; the old descriptor stays");
      return;
    }
    state.replaceDataSource(index, new RegisteredDataSource(p.id, d));
  }

  /** Producer p is going away: its instances end, the flushes and stops waiting for it go on. */
  void producerGone(ProducerConnection p) {
    for (ServiceSession s : state.sessions()) {
      s.instances.removeIf(inst -> inst.producerId == p.id);
      flushes.producerGone(s, p.id);
      if (s.state == ServiceSession.State.DISABLING_WAITING_STOP_ACKS) {
        stopAcked.accept(s);
      }
      maybeNotifyAllStarted(s);
    }
    state.removeDataSourcesOf(p.id);
  }

  // ---------------------------------------------------------------------------------------------
  // Instances

  /** Upstream's NameMatchesFilter: an exact name, or a regex matching the whole name. */
  static boolean producerMatches(String producerName, TraceConfig.DataSource cfg) {
    if (cfg.getProducerNameFilterCount() == 0 && cfg.getProducerNameRegexFilterCount() == 0) {
      return true;
    }
    if (cfg.getProducerNameFilterList().contains(producerName)) {
      return true;
    }
    for (String regex : cfg.getProducerNameRegexFilterList()) {
      try {
        if (Pattern.compile(regex).matcher(producerName).matches()) {
          return true;
        }
      } catch (PatternSyntaxException e) {
        // checked when the session was enabled
      }
    }
    return false;
  }

  /**
   * An instance of every registered data source the session's config names (on the producers its
   * filters admit), started if the session is; with onlyMissing, none for a producer's data
   * source the session already has an instance of (ChangeTraceConfig widening a filter).
   */
  void setUpInstances(ServiceSession s, boolean onlyMissing) {
    for (TraceConfig.DataSource dsCfg : s.config.getDataSourcesList()) {
      // Decided before any is set up: a producer with several registrations of the name gets an
      // instance for each, not only for the first.
      Set<Integer> alreadySetUp = onlyMissing ? producersWithInstance(s, dsCfg.getConfig().getName()) : Set.of();
      for (RegisteredDataSource r : List.copyOf(state.dataSources())) {
        if (!r.descriptor().getName().equals(dsCfg.getConfig().getName())
            || alreadySetUp.contains(r.producerId())) {
          continue;
        }
        ProducerConnection p = state.producer(r.producerId());
        SessionDataSource inst = setUp(s, dsCfg, p, r.descriptor());
        if (inst != null && s.state == ServiceSession.State.STARTED) {
          start(s, p, inst);
        }
      }
    }
  }

  private static Set<Integer> producersWithInstance(ServiceSession s, String name) {
    Set<Integer> producerIds = new HashSet<>();
    for (SessionDataSource inst : s.instances) {
      if (inst.name().equals(name)) {
        producerIds.add(inst.producerId);
      }
    }
    return producerIds;
  }

  private SessionDataSource setUp(ServiceSession s, TraceConfig.DataSource cfg, ProducerConnection p,
      DataSourceDescriptor d) {
    if (!state.admits(p.identity)) {
      // Producers of other uids that connected before the lockdown get no data source either.
      LOG.log(System.Logger.Level.INFO, "lockdown mode: not setting up \"{0}\" on producer {1} of uid {2}",
          d.getName(), p.id, p.identity.uid());
      return null;
    }
    if (!producerMatches(p.name, cfg) || !MachineFilter.matches(p.identity, s.config, cfg)) {
      return null;
    }
    int relative = cfg.getConfig().getTargetBuffer();
    if (relative < 0 || relative >= s.bufferIds.length) {
      return null; // refused at enable time; kept as a guard
    }
    int bufferId = s.bufferIds[relative];
    TraceConfig.ProducerConfig producerConfig = TraceConfig.ProducerConfig.getDefaultInstance();
    for (TraceConfig.ProducerConfig pc : s.config.getProducersList()) {
      if (pc.getProducerName().equals(p.name)) {
        producerConfig = pc;
        break;
      }
    }
    DataSourceConfig.Builder dsc = cfg.getConfig().toBuilder()
        .setTargetBuffer(bufferId)
        .setTracingSessionId(s.id)
        .setTraceDurationMs(s.config.getDurationMs())
        .setStopTimeoutMs((int) s.dataSourceStopTimeoutMs())
        .setEnableExtraGuardrails(s.config.getEnableExtraGuardrails());
    if (s.config.getPreferSuspendClockForDuration()) {
      dsc.setPreferSuspendClockForDuration(true);
    }
    SessionDataSource inst = new SessionDataSource(state.nextInstanceId(), p.id, dsc.build(), d);
    s.instances.add(inst);
    p.allowTargetBuffer(bufferId);
    if (!p.hasSharedMemory()) {
      long page = producerConfig.getPageSizeKb() * 1024L;
      long size = producerConfig.getShmSizeKb() * 1024L;
      ShmSizes sizes = ShmSizes.validate(size != 0 ? size : p.smbSizeHint,
          page != 0 ? page : p.pageSizeHint);
      p.setupSharedMemory(shmFactory.create(sizes.size()), sizes.pageSize(), false);
    }
    p.callbacks.setupDataSource(inst.instanceId, inst.config);
    return inst;
  }

  private void start(ServiceSession s, ProducerConnection p, SessionDataSource inst) {
    inst.state = inst.descriptor.getWillNotifyOnStart() ? SessionDataSource.State.STARTING
        : SessionDataSource.State.STARTED;
    p.callbacks.startDataSource(inst.instanceId, inst.config);
    if (inst.state == SessionDataSource.State.STARTED) {
      notifyInstanceState(s, inst, true);
    }
  }

  /** Session s starts: every instance it has set up starts. */
  void startInstances(ServiceSession s) {
    for (SessionDataSource inst : List.copyOf(s.instances)) {
      start(s, state.producer(inst.producerId), inst);
    }
    maybeNotifyAllStarted(s);
  }

  /** Session s stops: every instance is told to; those that ack the stop are STOPPING till they do. */
  void stopInstances(ServiceSession s) {
    for (SessionDataSource inst : s.instances) {
      ProducerConnection p = state.producer(inst.producerId);
      boolean waits = inst.descriptor.getWillNotifyOnStop();
      inst.state = waits ? SessionDataSource.State.STOPPING : SessionDataSource.State.STOPPED;
      p.callbacks.stopDataSource(inst.instanceId);
      if (!waits) {
        notifyInstanceState(s, inst, false);
      }
    }
  }

  /** Whether an instance of s still has to ack its stop. */
  static boolean anyStopping(ServiceSession s) {
    for (SessionDataSource inst : s.instances) {
      if (inst.state == SessionDataSource.State.STOPPING) {
        return true;
      }
    }
    return false;
  }

  /** Session s is freed: instances still running are told to stop, and all of them go. */
  void releaseInstances(ServiceSession s) {
    if (s.state == ServiceSession.State.STARTED
        || s.state == ServiceSession.State.DISABLING_WAITING_STOP_ACKS) {
      for (SessionDataSource inst : s.instances) {
        ProducerConnection p = state.producer(inst.producerId);
        if (p != null && inst.state != SessionDataSource.State.STOPPED) {
          p.callbacks.stopDataSource(inst.instanceId);
        }
      }
    }
  }

  /** After releaseInstances and the session's timers: the producers may no longer write for s. */
  void forgetInstances(ServiceSession s) {
    for (SessionDataSource inst : s.instances) {
      ProducerConnection p = state.producer(inst.producerId);
      if (p != null) {
        p.disallowTargetBuffer(inst.config.getTargetBuffer());
      }
    }
    s.instances.clear();
  }

  /** NotifyDataSourceStarted from p. */
  void started(ProducerConnection p, long instanceId) {
    for (ServiceSession s : state.sessions()) {
      for (SessionDataSource inst : s.instances) {
        if (inst.instanceId == instanceId && inst.producerId == p.id
            && inst.state == SessionDataSource.State.STARTING) {
          inst.state = SessionDataSource.State.STARTED;
          notifyInstanceState(s, inst, true);
          maybeNotifyAllStarted(s);
        }
      }
    }
  }

  /** NotifyDataSourceStopped from p. */
  void stopped(ProducerConnection p, long instanceId) {
    for (ServiceSession s : state.sessions()) {
      for (SessionDataSource inst : s.instances) {
        if (inst.instanceId == instanceId && inst.producerId == p.id
            && inst.state != SessionDataSource.State.STOPPED) {
          inst.state = SessionDataSource.State.STOPPED;
          notifyInstanceState(s, inst, false);
          if (s.state == ServiceSession.State.DISABLING_WAITING_STOP_ACKS) {
            stopAcked.accept(s);
          }
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // ObservableEvents

  /** ObserveEvents from c: a consumer that starts observing instances hears where they stand. */
  void observeEvents(ConsumerConnection c, int mask) {
    boolean had = c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES);
    c.observedEvents = mask;
    if (!had && c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES) && c.session != null) {
      for (SessionDataSource inst : c.session.instances) {
        boolean started = inst.state == SessionDataSource.State.STARTED;
        if (started || inst.state == SessionDataSource.State.STOPPED) {
          notifyInstanceState(c.session, inst, started);
        }
      }
    }
  }

  /** ObservableEvents TYPE_DATA_SOURCES_INSTANCES to the session's consumer, if it asked. */
  private void notifyInstanceState(ServiceSession s, SessionDataSource inst, boolean started) {
    ConsumerConnection c = s.consumer;
    if (c == null || !c.observes(ObservableEvents.Type.TYPE_DATA_SOURCES_INSTANCES)) {
      return;
    }
    ProducerConnection p = state.producer(inst.producerId);
    c.callbacks.onObservableEvents(ObservableEvents.newBuilder().addInstanceStateChanges(
        ObservableEvents.DataSourceInstanceStateChange.newBuilder()
            .setProducerName(p != null ? p.name : "")
            .setDataSourceName(inst.name())
            .setState(started ? ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STARTED
                : ObservableEvents.DataSourceInstanceState.DATA_SOURCE_INSTANCE_STATE_STOPPED))
        .build());
  }

  /** Once per started session, when no instance is STARTING any more: the event and its notice. */
  private void maybeNotifyAllStarted(ServiceSession s) {
    if (s.state != ServiceSession.State.STARTED || s.allDataSourcesStartedNotified) {
      return;
    }
    for (SessionDataSource inst : s.instances) {
      if (inst.state == SessionDataSource.State.STARTING) {
        return;
      }
    }
    s.allDataSourcesStartedNotified = true;
    s.addLifecycleEvent(TracingServiceEvent.ALL_DATA_SOURCES_STARTED_FIELD_NUMBER, clocks.now());
    ConsumerConnection c = s.consumer;
    if (c != null && c.observes(ObservableEvents.Type.TYPE_ALL_DATA_SOURCES_STARTED)) {
      c.callbacks.onObservableEvents(ObservableEvents.newBuilder().setAllDataSourcesStarted(true).build());
    }
  }
}
