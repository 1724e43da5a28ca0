package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The library versions the docs name are the ones the build uses: every "protobuf-java X" in the
 * README and docs/agent.md is the pom's oldest or newest checked protobuf-java, every "ASM X" the
 * pom's ASM (the agent jar nests exactly those).
 */
class DocumentedVersionsTest {
  private static String pomProperty(String pom, String name) {
    Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">").matcher(pom);
    assertTrue(m.find(), "pom property " + name);
    return m.group(1).trim();
  }

  private static List<String> versionsAfter(String text, String library) {
    Matcher m = Pattern.compile(Pattern.quote(library) + " (\\d+(?:\\.\\d+)*)").matcher(text);
    List<String> found = new ArrayList<>();
    while (m.find()) {
      found.add(m.group(1));
    }
    return found;
  }

  @Test
  void docsNameTheVersionsThePomBuildsWith() throws IOException {
    String pom = Files.readString(Path.of("pom.xml"));
    Set<String> protobuf = Set.of(pomProperty(pom, "protobuf.version"), pomProperty(pom, "protobuf.newest"));
    String asm = pomProperty(pom, "asm.version");
    for (Path doc : List.of(Path.of("README.md"), Path.of("docs", "agent.md"))) {
      String text = Files.readString(doc);
      for (String v : versionsAfter(text, "protobuf-java")) {
        assertTrue(protobuf.contains(v), doc + " names protobuf-java " + v + "; the pom has " + protobuf);
      }
      for (String v : versionsAfter(text, "ASM")) {
        assertEquals(asm, v, doc + " names ASM " + v);
      }
    }
    String readme = Files.readString(Path.of("README.md"));
    String version = pomProperty(pom.substring(pom.indexOf("<artifactId>jperfetto-parent</artifactId>")), "version");
    assertTrue(readme.contains("<artifactId>jperfetto</artifactId>\n  <version>" + version + "</version>"),
        "README's Maven snippet names version " + version);
    assertTrue(readme.contains("implementation(\"org.jperfetto:jperfetto:" + version + "\")"),
        "README's Gradle snippet names version " + version);
    String agentDoc = Files.readString(Path.of("docs", "agent.md"));
    assertFalse(versionsAfter(agentDoc, "ASM").isEmpty(), "docs/agent.md names the ASM version");
    assertTrue(agentDoc.contains("protobuf-java " + pomProperty(pom, "protobuf.version") + " and ASM " + asm
        + " are jars nested"), "docs/agent.md names what the agent jar nests");
  }
}
