package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.Test;

class DataSourceCheckTest {
  private static TraceConfig asking(String... names) {
    TraceConfig.Builder b = TraceConfig.newBuilder();
    for (String n : names) {
      b.addDataSources(TraceConfig.DataSource.newBuilder().setConfig(DataSourceConfig.newBuilder().setName(n)));
    }
    return b.build();
  }

  private static TracingServiceState offering(String... names) {
    TracingServiceState.Builder b = TracingServiceState.newBuilder();
    for (String n : names) {
      b.addDataSources(TracingServiceState.DataSource.newBuilder()
          .setDsDescriptor(DataSourceDescriptor.newBuilder().setName(n)));
    }
    return b.build();
  }

  @Test
  void offeredDataSourcesGiveNoWarning() {
    assertEquals(List.of(), DataSourceCheck.warnings(asking("track_event", "jvm.jfr", "track_event"),
        offering("jvm.jfr", "track_event", "track_event"), List.of()));
  }

  @Test
  void eachMissingNameIsWarnedOnceWithTheNearestOfferedName() {
    List<String> w = DataSourceCheck.warnings(asking("jvm_jfr", "track_event", "jvm_jfr", "linux.ftrace",
        "linux.system_info"), offering("track_event", "jvm.jfr"), List.of("linux.system_info"));
    assertEquals(2, w.size(), w.toString());
    assertEquals("Warning: no producer connected to the service offers data source \"jvm_jfr\" (yet): the trace "
        + "holds none of its data unless one registers it. Did you mean \"jvm.jfr\"? Offered now: jvm.jfr, "
        + "track_event", w.get(0));
    assertEquals("Warning: no producer connected to the service offers data source \"linux.ftrace\" (yet): the "
        + "trace holds none of its data unless one registers it. Offered now: jvm.jfr, track_event", w.get(1));
  }

  @Test
  void noProducerAtAllIsSaid() {
    assertEquals(List.of("Warning: no producer connected to the service offers data source \"track_event\" (yet): "
        + "the trace holds none of its data unless one registers it. No data source is offered now."),
        DataSourceCheck.warnings(asking("track_event"), offering(), List.of()));
  }

  @Test
  void editDistanceCountsInsertionsDeletionsAndReplacements() {
    assertEquals(0, DataSourceCheck.editDistance("track_event", "track_event"));
    assertEquals(1, DataSourceCheck.editDistance("track_events", "track_event"));
    assertEquals(1, DataSourceCheck.editDistance("jvm_jfr", "jvm.jfr"));
    assertEquals(3, DataSourceCheck.editDistance("", "abc"));
    assertEquals(3, DataSourceCheck.editDistance("kitten", "sitting"));
  }
}
