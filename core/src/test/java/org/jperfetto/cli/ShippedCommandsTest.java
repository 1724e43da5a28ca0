package org.jperfetto.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The commands users get: {@code jperfetto --help} lists the shipped subcommands and nothing of the
 * benchmark or the image build (those are jperfetto-tools', in the tools module).
 */
class ShippedCommandsTest {
  @Test
  void theUsageListsTheProductsCommandsAndNoBenchmarkOrBuildTool() {
    List<Subcommand> shipped = Jperfetto.shippedSubcommands();
    shipped.forEach(sub -> Plugins.register(Subcommand.class, sub));
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      CliContext ctx = new CliContext(new ByteArrayInputStream(new byte[0]),
          new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(),
          false);
      assertEquals(Jperfetto.EXIT_ERROR, Jperfetto.run(new String[] {"--help"}, ctx));
    } finally {
      shipped.forEach(sub -> Plugins.unregister(Subcommand.class, sub));
    }
    String usage = err.toString(StandardCharsets.UTF_8);
    List<String> listed = usage.substring(usage.indexOf("COMMANDS:")).lines().skip(1)
        .map(line -> line.strip().split(" ")[0]).sorted().toList();
    assertEquals(List.of("attach", "demo", "open", "summary", "view"), listed, usage);
    for (String tool : List.of("ref-producer", "aot-training", "--gaps")) {
      assertFalse(usage.contains(tool), () -> tool + " in " + usage);
    }
  }

  @Test
  void theToolsClassesAreNotInTheProduct() {
    for (String gone : List.of("RefProducer", "AotTraining", "SliceIndexGaps", "SessionStart")) {
      assertThrows(ClassNotFoundException.class, () -> Class.forName("org.jperfetto.cli." + gone), gone);
    }
  }
}
