package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracingServiceState;
import org.junit.jupiter.api.Test;

/** The demo's flags, its session config and how it recognises its own data source. */
class DemoOptionsTest {
  @Test
  void defaults() throws Exception {
    DemoOptions o = DemoOptions.parse(new String[0]);
    assertEquals(new DemoOptions("demo.perfetto-trace", 5_000, false, false, false), o);
  }

  @Test
  void shortLongAndInlineForms() throws Exception {
    assertEquals(new DemoOptions("a.pftrace", 2_000, true, false, false),
        DemoOptions.parse(new String[] {"-o", "a.pftrace", "-t", "2s", "--system"}));
    assertEquals(new DemoOptions("b", 1_500, false, false, false),
        DemoOptions.parse(new String[] {"--out=b", "--time=1500ms"}));
    assertEquals(new DemoOptions("demo.perfetto-trace", 60_000, false, true, false),
        DemoOptions.parse(new String[] {"--producer", "--time", "1m"}));
    assertTrue(DemoOptions.parse(new String[] {"-h"}).help());
  }

  @Test
  void badCommandLinesSayWhat() {
    assertEquals("unknown argument: --bogus", assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"--bogus"})).getMessage());
    assertEquals("-t needs a value", assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"-t"})).getMessage());
    String expected = "--time argument is invalid: 5 (expected a whole number and a unit (ms, s, m, h), e.g. "
        + "500ms, 10s, 5m, 1h)";
    assertEquals(expected, assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"-t", "5"})).getMessage());
    assertTrue(assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"-t", "0"})).getMessage().contains("between 1ms and 1h"));
    assertTrue(assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"-t", "2h"})).getMessage().contains("between 1ms and 1h"));
    assertTrue(assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"--producer", "-o", "x"})).getMessage().contains("-o does not apply"));
    assertTrue(assertThrows(DemoOptions.UsageException.class,
        () -> DemoOptions.parse(new String[] {"--producer", "--system"})).getMessage().contains("drop --system"));
  }

  @Test
  void usageErrorsExitOneWithAHint() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]), new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(err, true), Map.of(), false);
    assertEquals(1, new Demo().run(new String[] {"--bogus"}, ctx));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("jperfetto demo: unknown argument: --bogus"));
    err.reset();
    assertEquals(1, new Demo().run(new String[] {"--help"}, ctx));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("Usage: jperfetto demo [-o FILE]"));
  }

  @Test
  void sessionConfigRecordsEveryCategoryForTheGivenTime() {
    TraceConfig c = Demo.config(2_000);
    assertEquals(2_000, c.getDurationMs());
    assertEquals(Demo.BUFFER_KB, c.getBuffers(0).getSizeKb());
    TraceConfig.DataSource te = c.getDataSources(0);
    assertEquals(TrackEvent.DATA_SOURCE_NAME, te.getConfig().getName());
    assertEquals(java.util.List.of("*"), te.getConfig().getTrackEventConfig().getEnabledCategoriesList());
    assertEquals(org.jperfetto.producer.jfr.JfrDataSource.NAME, c.getDataSources(1).getConfig().getName(),
        "the JVM's own events next to the workload's");
    assertEquals("", c.getDataSources(1).getConfig().getLegacyConfig(), "jvm.jfr's default groups");
  }

  @Test
  void recognisesOnlyItsOwnProducersTrackEvent() {
    long pid = 4242;
    TracingServiceState.Builder state = TracingServiceState.newBuilder()
        .addProducers(TracingServiceState.Producer.newBuilder().setId(1).setName("other").setPid(4242))
        .addProducers(TracingServiceState.Producer.newBuilder().setId(2).setName(Demo.PRODUCER_NAME).setPid(99))
        .addDataSources(ds(1, TrackEvent.DATA_SOURCE_NAME))
        .addDataSources(ds(2, TrackEvent.DATA_SOURCE_NAME));
    assertFalse(Demo.lists(state.build(), pid), "another process's demo, another producer of this process");
    state.addProducers(TracingServiceState.Producer.newBuilder().setId(3).setName(Demo.PRODUCER_NAME).setPid(4242))
        .addDataSources(ds(3, "jvm.other"));
    assertFalse(Demo.lists(state.build(), pid), "this demo without track_event yet");
    state.addDataSources(ds(3, TrackEvent.DATA_SOURCE_NAME));
    assertTrue(Demo.lists(state.build(), pid));
  }

  @Test
  void producerSocketComesFromTheEnvironmentFirstOfAList() {
    assertEquals("/x/p.sock", Demo.producerSocket(Map.of("PERFETTO_PRODUCER_SOCK_NAME", "/x/p.sock,vsock://2:1")));
    assertFalse(Demo.producerSocket(Map.of()).isEmpty());
  }

  private static TracingServiceState.DataSource ds(int producer, String name) {
    return TracingServiceState.DataSource.newBuilder().setProducerId(producer)
        .setDsDescriptor(DataSourceDescriptor.newBuilder().setName(name)).build();
  }
}
