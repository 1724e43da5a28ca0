package org.jperfetto.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The build treats every javac lint warning as an error: the parent pom's compiler arguments say
 * so, no module's compile takes them back, and with those arguments a warning really fails a
 * compile while a warning silenced where it happens does not.
 */
class CompilerWarningsTest {
  private static final Path ROOT = Path.of(".");
  private static final Pattern ARGS = Pattern.compile("<compilerArgs([^>]*)>(.*?)</compilerArgs>", Pattern.DOTALL);
  private static final Pattern ARG = Pattern.compile("<arg>([^<]*)</arg>");

  @Test
  void theParentsCompilerArgumentsMakeWarningsErrors() throws IOException {
    List<String> args = parentCompilerArgs();
    assertTrue(args.contains("-Werror"), "parent pom's compilerArgs: " + args);
    assertTrue(args.stream().anyMatch(a -> a.startsWith("-Xlint:all")), "parent pom's compilerArgs: " + args);
  }

  @Test
  void noModuleReplacesTheCompilerArgumentsWithoutWarningsAsErrors() throws IOException {
    List<String> offenders = new ArrayList<>();
    int overrides = 0;
    for (Path pom : modulePoms()) {
      Matcher m = ARGS.matcher(Files.readString(pom));
      while (m.find()) {
        if (m.group(1).contains("combine.self=\"override\"")) {
          overrides++;
          List<String> args = argsOf(m.group(2));
          if (!args.contains("-Werror")) {
            offenders.add(pom + ": " + args);
          }
        }
      }
    }
    assertTrue(overrides > 0, "the release-8 entry compiles override the arguments: the check must see them");
    assertEquals(List.of(), offenders, "compiles that drop -Werror");
  }

  @Test
  void withTheBuildsArgumentsAWarningFailsTheCompileAndASilencedOneDoesNot(@TempDir Path dir) throws Exception {
    String raw = "class Raw { java.util.List<String> names() { return new java.util.ArrayList(); } }";
    String silenced = "class Silenced { @SuppressWarnings({\"rawtypes\", \"unchecked\"}) // raw on purpose\n"
        + "  java.util.List<String> names() { return new java.util.ArrayList(); } }";

    Compile failed = compile(dir, "Raw", raw);
    assertEquals(false, failed.ok(), "a raw type compiled with -Werror: " + failed.log());
    assertTrue(failed.log().contains("warnings found and -Werror specified"), failed.log());

    Compile passed = compile(dir, "Silenced", silenced);
    assertTrue(passed.ok(), passed.log());
  }

  private record Compile(boolean ok, String log) {}

  private static Compile compile(Path dir, String name, String source) throws Exception {
    Path file = Files.writeString(dir.resolve(name + ".java"), source);
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
        "--release", "22", "-proc:none", "-d", dir.resolve("classes").toString()));
    command.addAll(parentCompilerArgs());
    command.add(file.toString());
    Process javac = new ProcessBuilder(command).redirectErrorStream(true).start();
    String log = new String(javac.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Compile(javac.waitFor() == 0, log);
  }

  private static List<String> parentCompilerArgs() throws IOException {
    Matcher m = ARGS.matcher(Files.readString(ROOT.resolve("pom.xml")));
    assertTrue(m.find(), "the parent pom configures the compiler's arguments");
    List<String> args = argsOf(m.group(2));
    assertFalse(m.find(), "the parent pom configures the compiler's arguments once");
    return args;
  }

  private static List<String> argsOf(String block) {
    return ARG.matcher(block).results().map(r -> r.group(1).trim()).toList();
  }

  private static List<Path> modulePoms() throws IOException {
    try (Stream<Path> dirs = Files.list(ROOT)) {
      return dirs.map(d -> d.resolve("pom.xml")).filter(Files::isRegularFile).sorted().toList();
    }
  }
}
