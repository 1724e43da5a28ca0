package org.jperfetto.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Which methods become slices: a list of {@code CLASS[#METHOD]} patterns where {@code *} matches
 * any run of characters (dots included) and a missing {@code #METHOD} means every method. Class
 * names are binary names ({@code com.example.Outer$Inner}). Constructors match only when named
 * ({@code #<init>}); static initializers, synthetic, bridge, abstract and native methods never.
 *
 * <pre>
 * com.example.Service#handle      one method (all overloads)
 * com.example.db.*#query*         methods starting with "query" of every class under com.example.db
 * com.example.Parser              every method of one class
 * </pre>
 */
public record MethodPatterns(List<Entry> entries) {
  /** One pattern, compiled. */
  public record Entry(String text, Pattern type, Pattern method, boolean constructor) {}

  public static final MethodPatterns NONE = new MethodPatterns(List.of());

  public MethodPatterns {
    entries = List.copyOf(entries);
  }

  /**
   * Parses patterns (blank ones are skipped).
   *
   * @throws IllegalArgumentException naming a malformed pattern
   */
  public static MethodPatterns parse(List<String> patterns) {
    List<Entry> out = new ArrayList<>();
    for (String raw : patterns) {
      String p = raw.strip();
      if (p.isEmpty()) {
        continue;
      }
      int hash = p.indexOf('#');
      String type = hash < 0 ? p : p.substring(0, hash);
      String method = hash < 0 ? "*" : p.substring(hash + 1);
      if (type.isEmpty() || method.isEmpty() || method.indexOf('#') >= 0 || !type.matches("[\\w.$*]+")
          || !method.matches("[\\w$*]+|<init>")) {
        throw new IllegalArgumentException("method pattern \"" + raw + "\": expected CLASS[#METHOD] with * as"
            + " wildcard, e.g. com.example.Service#handle*");
      }
      out.add(new Entry(p, glob(type), glob(method), method.equals("<init>")));
    }
    return new MethodPatterns(out);
  }

  private static Pattern glob(String g) {
    List<String> parts = new ArrayList<>();
    for (String part : g.split("\\*", -1)) {
      parts.add(part.isEmpty() ? "" : Pattern.quote(part));
    }
    return Pattern.compile(String.join(".*", parts));
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /** Whether some pattern may match a method of className (dotted binary name). */
  public boolean matchesClass(String className) {
    for (Entry e : entries) {
      if (e.type().matcher(className).matches()) {
        return true;
      }
    }
    return false;
  }

  /** Whether method methodName of className is instrumented. */
  public boolean matches(String className, String methodName) {
    boolean constructor = methodName.equals("<init>");
    if (methodName.equals("<clinit>")) {
      return false;
    }
    for (Entry e : entries) {
      if (!e.type().matcher(className).matches()) {
        continue;
      }
      if (constructor ? e.constructor() : e.method().matcher(methodName).matches()) {
        return true;
      }
    }
    return false;
  }
}
