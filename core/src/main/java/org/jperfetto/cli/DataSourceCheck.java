package org.jperfetto.cli;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import org.jperfetto.consumer.TracingConsumer;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;

/**
 * The warning for a session that asks for data sources no connected producer offers: a misspelt
 * name or an app that never registered its data source otherwise gives a clean exit and an empty
 * trace. A warning, not an error: a producer may still connect and register the data source.
 */
final class DataSourceCheck {
  /** Edits (insert, delete, replace a character) within which an offered name is suggested. */
  private static final int SUGGEST_WITHIN = 2;

  private DataSourceCheck() {}

  /**
   * One line per data source of config that no producer in state offers, but those in quiet;
   * empty when all are offered.
   */
  static List<String> warnings(TraceConfig config, TracingServiceState state, Collection<String> quiet) {
    TreeSet<String> offered = new TreeSet<>();
    for (TracingServiceState.DataSource ds : state.getDataSourcesList()) {
      offered.add(ds.getDsDescriptor().getName());
    }
    List<String> lines = new ArrayList<>();
    for (String missing : TracingConsumer.dataSourcesNotOffered(config, state)) {
      if (quiet.contains(missing)) {
        continue;
      }
      StringBuilder line = new StringBuilder("Warning: no producer connected to the service offers data source \"")
          .append(missing).append("\" (yet): the trace holds none of its data unless one registers it. ");
      String suggestion = closest(missing, offered);
      if (suggestion != null) {
        line.append("Did you mean \"").append(suggestion).append("\"? ");
      }
      line.append(offered.isEmpty() ? "No data source is offered now." : "Offered now: " + String.join(", ", offered));
      lines.add(line.toString());
    }
    return lines;
  }

  /** The offered name nearest to name, if within {@link #SUGGEST_WITHIN} edits; else null. */
  private static String closest(String name, Iterable<String> offered) {
    String best = null;
    int bestDistance = SUGGEST_WITHIN + 1;
    for (String o : offered) {
      int d = editDistance(name, o);
      if (d < bestDistance) {
        best = o;
        bestDistance = d;
      }
    }
    return best;
  }

  /** Levenshtein distance, two rows. */
  static int editDistance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] t = previous;
      previous = current;
      current = t;
    }
    return previous[b.length()];
  }
}
