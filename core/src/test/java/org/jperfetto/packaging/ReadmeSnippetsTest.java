package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * README.md's code snippets are the example app's code: each block after a
 * {@code <!-- snippet: FILE#NAME -->} marker equals the lines between {@code // snippet:NAME} and
 * {@code // end-snippet} in FILE (indentation removed), and every region the example marks is shown.
 * ExampleAppIT compiles and runs that code, so the README cannot show code that does not work.
 */
class ReadmeSnippetsTest {
  private static final Pattern MARKER = Pattern.compile("<!-- snippet: (\\S+)#(\\S+) -->");

  @Test
  void everyReadmeSnippetIsTheExamplesCodeVerbatim() throws IOException {
    List<String> readme = Files.readAllLines(Path.of("README.md"));
    Map<String, String> shown = new LinkedHashMap<>();
    for (int i = 0; i < readme.size(); i++) {
      Matcher m = MARKER.matcher(readme.get(i));
      if (!m.matches()) {
        continue;
      }
      assertEquals("```java", readme.get(i + 1), "a java block right after " + readme.get(i));
      List<String> block = new ArrayList<>();
      for (int j = i + 2; !readme.get(j).equals("```"); j++) {
        block.add(readme.get(j));
      }
      String key = m.group(1) + "#" + m.group(2);
      assertEquals(region(Path.of(m.group(1)), m.group(2)), String.join("\n", block), "README snippet " + key);
      shown.put(key, "");
    }
    assertTrue(shown.size() >= 4, "README shows the example's snippets: " + shown.keySet());
    for (Path source : List.of(Path.of("examples/hello-trace/src/main/java/module-info.java"),
        Path.of("examples/hello-trace/src/main/java/org/jperfetto/example/HelloTrace.java"))) {
      for (String line : Files.readAllLines(source)) {
        String t = line.strip();
        if (t.startsWith("// snippet:")) {
          String key = source + "#" + t.substring("// snippet:".length());
          assertTrue(shown.containsKey(key), key + " is marked in the example but not shown in README.md");
        }
      }
    }
  }

  /** The lines of region name in file, without their common indentation. */
  static String region(Path file, String name) throws IOException {
    List<String> lines = Files.readAllLines(file);
    int start = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals("// snippet:" + name)) {
        start = i + 1;
      }
    }
    assertFalse(start < 0, "no // snippet:" + name + " in " + file);
    List<String> region = new ArrayList<>();
    for (int i = start; !lines.get(i).strip().equals("// end-snippet"); i++) {
      region.add(lines.get(i));
    }
    int indent = region.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return String.join("\n", region.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
  }
}
