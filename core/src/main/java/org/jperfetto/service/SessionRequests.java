package org.jperfetto.service;

import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jperfetto.protos.TraceConfig;

/**
 * What a consumer may ask of a session besides enabling, starting, stopping and reading it, on
 * the service thread: ChangeTraceConfig, Detach, Attach and CloneSession.
 */
final class SessionRequests {
  private static final System.Logger LOG = System.getLogger(SessionRequests.class.getName());

  private final ServiceState state;
  private final DataSources dataSources;
  private final Flushes flushes;
  private final ClockSource clocks;
  private final Consumer<ServiceSession> drainIntoFile;

  /** @param drainIntoFile drains a write_into_file session into its file (and stops it once full) */
  SessionRequests(ServiceState state, DataSources dataSources, Flushes flushes, ClockSource clocks,
      Consumer<ServiceSession> drainIntoFile) {
    this.state = state;
    this.dataSources = dataSources;
    this.flushes = flushes;
    this.clocks = clocks;
    this.drainIntoFile = drainIntoFile;
  }

  /** ChangeTraceConfig: only producer_name_filter / producer_name_regex_filter may change. */
  String changeTraceConfig(ServiceSession s, TraceConfig updated) {
    if (s.state != ServiceSession.State.CONFIGURED && s.state != ServiceSession.State.STARTED) {
      return "ChangeTraceConfig: the session is not running: session=" + s.id;
    }
    TraceConfig.Builder withoutFilters = updated.toBuilder();
    if (updated.getDataSourcesCount() != s.config.getDataSourcesCount()) {
      return "ChangeTraceConfig only supports changing producer_name_filter and"
          + " producer_name_regex_filter (data source count changed)";
    }
    for (int i = 0; i < updated.getDataSourcesCount(); i++) {
      TraceConfig.DataSource was = s.config.getDataSources(i);
      withoutFilters.setDataSources(i, updated.getDataSources(i).toBuilder()
          .clearProducerNameFilter().addAllProducerNameFilter(was.getProducerNameFilterList())
          .clearProducerNameRegexFilter().addAllProducerNameRegexFilter(was.getProducerNameRegexFilterList()));
      for (String regex : updated.getDataSources(i).getProducerNameRegexFilterList()) {
        try {
          Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
          return "ChangeTraceConfig: invalid producer_name_regex_filter \"" + regex + "\"";
        }
      }
    }
    if (!withoutFilters.build().equals(s.config)) {
      return "ChangeTraceConfig only supports changing producer_name_filter and"
          + " producer_name_regex_filter";
    }
    s.config = updated;
    dataSources.setUpInstances(s, true);
    return "";
  }

  String detach(ConsumerConnection c, String key) {
    ServiceSession s = c.session;
    if (state.detachedSession(c.uid, key) != null) {
      return "a session of uid " + c.uid + " is already detached with key \"" + key + "\"";
    }
    s.consumer = null;
    s.readCursor = null; // a read in progress ends here; the next owner reads afresh
    s.detachKey = key;
    c.session = null;
    return "";
  }

  Optional<TraceConfig> attach(ConsumerConnection c, String key) {
    if (c.session != null) {
      LOG.log(System.Logger.Level.INFO, "attach \"{0}\": the consumer already has session {1}", key,
          c.session.id);
      return Optional.empty();
    }
    ServiceSession s = state.detachedSession(c.uid, key);
    if (s == null) {
      return Optional.empty();
    }
    s.detachKey = null;
    s.consumer = c;
    c.session = s;
    return Optional.of(s.config);
  }

  /**
   * CloneSession: a read-only copy of a session's buffers (flushed first if it traces) becomes
   * the consumer's session; the answer goes to the consumer's onSessionCloned.
   */
  void cloneSession(ConsumerConnection c, long sessionId, String uniqueName,
      Optional<ConsumerEndpoint.TraceFileSink> outputFile) {
    String error = null;
    ServiceSession src = null;
    if (c.session != null) {
      error = "The consumer is already attached to another tracing session";
    } else {
      src = uniqueName.isEmpty() ? state.liveSession(sessionId) : state.sessionNamed(uniqueName);
      if (src == null) {
        error = "Tracing session not found";
      } else if (c.uid != 0 && c.uid != src.consumerUid) {
        error = "Not allowed to clone a session from another UID";
      } else if (state.sessionCount() >= ServiceLimits.MAX_SESSIONS) {
        error = "Too many concurrent tracing sessions (" + state.sessionCount() + ")";
      } else if (src.fileSink != null && outputFile.isEmpty()) {
        error = "Failed to clone 'write_into_file' session: a file descriptor is required to copy"
            + " existing file";
      }
    }
    if (error != null) {
      c.callbacks.onSessionCloned(false, error, 0, 0, false);
      return;
    }
    long srcId = src.id;
    if (src.state == ServiceSession.State.STARTED) {
      flushes.flush(src, 0, ServiceFlushFlags.TRACE_CLONE, ok -> finishClone(c, srcId, outputFile));
    } else {
      finishClone(c, srcId, outputFile);
    }
  }

  private void finishClone(ConsumerConnection c, long srcId,
      Optional<ConsumerEndpoint.TraceFileSink> outputFile) {
    ServiceSession src = state.liveSession(srcId);
    if (src == null || c.session != null || !state.hasConsumer(c)) {
      if (state.hasConsumer(c)) {
        c.callbacks.onSessionCloned(false, src == null ? "The tracing session ended while cloning"
            : "The consumer is already attached to another tracing session", 0, 0, false);
      }
      return;
    }
    if (!state.hasIdsForBuffers(src.bufferIds.length)) {
      c.callbacks.onSessionCloned(false, "Buffer id allocation failed", 0, 0, false);
      return;
    }
    // A write_into_file original: its file so far, then (below) its unread buffers, into the
    // consumer's file. Copied here, after the flush, so no drain of the original falls between.
    ConsumerEndpoint.TraceFileSink cloneFile = src.fileSink != null ? outputFile.orElse(null) : null;
    long copiedBytes = 0;
    if (cloneFile != null) {
      try {
        copiedBytes = src.fileSink.copyTo(cloneFile);
      } catch (java.io.IOException | RuntimeException e) {
        c.callbacks.onSessionCloned(false, "Failed to clone 'write_into_file' session: failed to copy"
            + " existing file: " + e.getMessage(), 0, 0, false);
        return;
      }
    }
    int[] ids = new int[src.bufferIds.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = state.addBuffer(state.buffer(src.bufferIds[i]).copy());
    }
    UUID uuid = UUID.randomUUID();
    ServiceSession clone = state.newSession(c, src.config, ids, uuid);
    clone.state = ServiceSession.State.CLONED_READ_ONLY;
    clone.clockSnapshots.add(clocks.snapshot());
    clone.receivedTriggers.addAll(src.receivedTriggers);
    clone.shouldEmitStats = true;
    if (cloneFile != null) {
      clone.fileSink = cloneFile;
      clone.bytesWrittenIntoFile = copiedBytes;
      drainIntoFile.accept(clone); // flushed already: straight into the file, before the answer
    }
    c.callbacks.onSessionCloned(true, "", uuid.getMostSignificantBits(), uuid.getLeastSignificantBits(),
        cloneFile != null);
  }
}
