package org.jperfetto.cli;

import java.io.PrintStream;
import java.util.stream.Collectors;
import org.jperfetto.protos.TracingServiceState;

/**
 * The readable {@code --query} report: the service, its producers, their data sources (with the
 * track_event categories or atrace categories they announce) and the tracing sessions. Column
 * layout follows upstream's so people who know one read the other; not for scripts (use
 * {@code --query-raw}).
 */
final class ServiceStatePrinter {
  static final int SHORT_CATEGORIES = 40;

  private ServiceStatePrinter() {}

  static void print(TracingServiceState state, boolean longLines, PrintStream out) {
    out.println("Not meant for machine consumption. Use --query-raw for scripts.");
    out.println();
    out.printf("Service: %s%n", state.getTracingServiceVersion());
    out.printf("Tracing sessions: %d (started: %d)%n", state.getNumSessions(), state.getNumSessionsStarted());

    out.printf("%n%nPRODUCER PROCESSES CONNECTED:%n%n");
    out.printf("%-6s %-8s %-8s %-6s %-42s %s%n", "ID", "PID", "UID", "FLAGS", "NAME", "SDK");
    out.printf("%-6s %-8s %-8s %-6s %-42s %s%n", "==", "===", "===", "=====", "====", "===");
    for (TracingServiceState.Producer p : state.getProducersList()) {
      out.printf("%-6d %-8d %-8d %-6s %-42s %s%n", p.getId(), p.getPid(), p.getUid(),
          p.getFrozen() ? "F" : "", p.getName(), p.getSdkVersion());
    }

    out.printf("%n%nDATA SOURCES REGISTERED:%n%n");
    out.printf("%-40s %-28s %s%n", "NAME", "PRODUCER", "DETAILS");
    out.printf("%-40s %-28s %s%n", "===", "========", "========");
    for (TracingServiceState.DataSource ds : state.getDataSourcesList()) {
      String producer = state.getProducersList().stream().filter(p -> p.getId() == ds.getProducerId())
          .findFirst().map(p -> p.getName() + " (" + p.getId() + ")").orElse("");
      String categories = ds.getDsDescriptor().hasTrackEventDescriptor()
          ? ds.getDsDescriptor().getTrackEventDescriptor().getAvailableCategoriesList().stream()
              .map(c -> c.getName()).collect(Collectors.joining(","))
          : ds.getDsDescriptor().getFtraceDescriptor().getAtraceCategoriesList().stream()
              .map(c -> c.getName()).collect(Collectors.joining(","));
      if (!longLines && categories.length() > SHORT_CATEGORIES) {
        categories = categories.substring(0, SHORT_CATEGORIES) + "... (use --long to expand)";
      }
      out.printf("%-40s %-28s %s%n", ds.getDsDescriptor().getName(), producer, categories);
    }

    if (state.getSupportsTracingSessions()) {
      out.printf("%n%nTRACING SESSIONS:%n%n");
      out.printf("ID      UID     STATE      BUF (#) KB   DUR (s)   #DS  STARTED  NAME%n");
      out.printf("===     ===     =====      ==========   =======   ===  =======  ====%n");
      for (TracingServiceState.TracingSession s : state.getTracingSessionsList()) {
        long kb = 0;
        for (int size : s.getBufferSizeKbList()) {
          kb += Integer.toUnsignedLong(size);
        }
        long sec = (s.getStartRealtimeNs() / 1_000_000_000L) % 86_400;
        out.printf("%-7s %-7d %-10s (%d) %-8d %-9d %-4d %02d:%02d:%02d %s%n",
            Long.toUnsignedString(s.getId()), s.getConsumerUid(), s.getState(), s.getBufferSizeKbCount(), kb,
            Integer.toUnsignedLong(s.getDurationMs()) / 1000, s.getNumDataSources(),
            sec / 3600, (sec / 60) % 60, sec % 60, s.getUniqueSessionName());
      }
      if (state.getTracingSessionsCount() != state.getNumSessions()) {
        out.printf("%nNOTE: Some tracing sessions are not reported in the list above.%n"
            + "They are likely owned by a different UID; run as root to list them all.%n");
      }
    }
  }
}
