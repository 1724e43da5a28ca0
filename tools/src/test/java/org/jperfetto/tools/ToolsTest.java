package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ToolsTest {
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final ToolContext ctx = new ToolContext(new PrintStream(new ByteArrayOutputStream()),
      new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());

  @Test
  void withoutAKnownToolTheUsageListsThemAll() {
    for (String[] args : new String[][] {{}, {"record"}}) {
      err.reset();
      assertEquals(Tools.EXIT_ERROR, Tools.run(args, ctx));
      String usage = err.toString(StandardCharsets.UTF_8);
      List<String> listed = usage.lines().filter(l -> l.startsWith("  ")).map(l -> l.strip().split(" ")[0]).toList();
      assertEquals(List.of("ref-producer", "aot-training", "gaps"), listed, usage);
    }
  }

  @Test
  void theProducerSocketIsTheFirstOfTheEnvsList() {
    ToolContext two = new ToolContext(System.out, System.err,
        Map.of(ToolContext.PRODUCER_ENV, "/tmp/a.sock,10.0.0.1:20001", ToolContext.CONSUMER_ENV, "/tmp/c.sock"));
    assertEquals("/tmp/a.sock", two.producerSocket());
    assertEquals("/tmp/c.sock", two.consumerSocket());
    assertTrue(!ctx.producerSocket().isEmpty() && !ctx.consumerSocket().isEmpty(), "system defaults otherwise");
  }
}
