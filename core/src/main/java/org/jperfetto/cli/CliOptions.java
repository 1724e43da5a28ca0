package org.jperfetto.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The command line of {@code jperfetto}, parsed the way upstream's perfetto parses it (GNU
 * getopt_long: {@code -cFILE}, {@code -c FILE}, {@code --config=FILE}, {@code --config FILE};
 * positional arguments anywhere).
 */
final class CliOptions {
  /** A command line that cannot be run; the message says why. */
  static final class UsageException extends Exception {
    UsageException(String message) {
      super(message);
    }
  }

  String configFile;
  String out;
  boolean background;
  String time;
  String buffer;
  String size;
  final List<String> apps = new ArrayList<>();
  final List<String> categories = new ArrayList<>();
  boolean txt;
  boolean txtLossy;
  boolean noClobber;
  /** Show the trace in ui.perfetto.dev once it is written (see {@link OpenCommand}). */
  boolean open;
  String detachKey;
  String attachKey;
  boolean isDetached;
  boolean stop;
  boolean query;
  boolean queryRaw;
  boolean queryLong;
  boolean system;
  boolean help;
  boolean version;
  Long cloneSessionId;
  String cloneName;
  final List<String> attributes = new ArrayList<>();
  /** The arguments as given, for re-launching in the background. */
  List<String> raw = List.of();

  /** Options taking a value, by long name; the short letter if there is one. */
  private static final Map<String, Character> WITH_VALUE = Map.ofEntries(
      Map.entry("config", 'c'), Map.entry("out", 'o'), Map.entry("time", 't'),
      Map.entry("buffer", 'b'), Map.entry("size", 's'), Map.entry("app", 'a'),
      Map.entry("detach", '\0'), Map.entry("attach", '\0'), Map.entry("is_detached", '\0'),
      Map.entry("clone", '\0'), Map.entry("clone-by-name", '\0'), Map.entry("add-attribute", '\0'));

  private static final Map<String, Character> FLAGS = Map.ofEntries(
      Map.entry("help", 'h'), Map.entry("background", 'd'), Map.entry("txt", '\0'),
      Map.entry("txt-lossy", '\0'), Map.entry("no-clobber", '\0'), Map.entry("open", '\0'), Map.entry("stop", '\0'),
      Map.entry("query", '\0'), Map.entry("query-raw", '\0'), Map.entry("long", '\0'),
      Map.entry("system", '\0'), Map.entry("version", '\0'));

  static CliOptions parse(String[] args) throws UsageException {
    CliOptions o = new CliOptions();
    o.raw = List.of(args);
    boolean onlyPositional = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (onlyPositional || a.equals("-") || !a.startsWith("-")) {
        o.categories.add(a);
        continue;
      }
      if (a.equals("--")) {
        onlyPositional = true;
        continue;
      }
      String name;
      String value = null;
      if (a.startsWith("--")) {
        int eq = a.indexOf('=');
        name = eq < 0 ? a.substring(2) : a.substring(2, eq);
        value = eq < 0 ? null : a.substring(eq + 1);
        if (FLAGS.containsKey(name)) {
          if (value != null) {
            throw new UsageException("option --" + name + " takes no value");
          }
        } else if (!WITH_VALUE.containsKey(name)) {
          throw new UsageException("unknown option --" + name);
        }
      } else {
        char letter = a.charAt(1);
        name = longName(letter);
        if (name == null) {
          throw new UsageException("unknown option -" + letter);
        }
        if (WITH_VALUE.containsKey(name) && a.length() > 2) {
          value = a.substring(2);
        } else if (a.length() > 2) {
          throw new UsageException("unknown option " + a);
        }
      }
      if (WITH_VALUE.containsKey(name) && value == null) {
        if (i + 1 >= args.length) {
          throw new UsageException("option --" + name + " needs a value");
        }
        value = args[++i];
      }
      o.set(name, value);
    }
    return o;
  }

  private static String longName(char letter) {
    for (var e : WITH_VALUE.entrySet()) {
      if (e.getValue() == letter) {
        return e.getKey();
      }
    }
    for (var e : FLAGS.entrySet()) {
      if (e.getValue() == letter) {
        return e.getKey();
      }
    }
    return null;
  }

  private void set(String name, String value) throws UsageException {
    switch (name) {
      case "config" -> configFile = value;
      case "out" -> out = value;
      case "time" -> time = value;
      case "buffer" -> buffer = value;
      case "size" -> size = value;
      case "app" -> apps.add(value);
      case "detach" -> detachKey = nonEmpty(name, value);
      case "attach" -> attachKey = nonEmpty(name, value);
      case "is_detached" -> {
        attachKey = nonEmpty(name, value);
        isDetached = true;
      }
      case "clone" -> {
        try {
          cloneSessionId = Long.parseUnsignedLong(value);
        } catch (NumberFormatException e) {
          throw new UsageException("--clone needs a session id (see --query), got: " + value);
        }
      }
      case "clone-by-name" -> cloneName = nonEmpty(name, value);
      case "add-attribute" -> {
        if (value.isEmpty() || value.startsWith("=")) {
          throw new UsageException("add-attribute: key must be non-empty");
        }
        attributes.add(value);
      }
      case "help" -> help = true;
      case "background" -> background = true;
      case "txt" -> txt = true;
      case "txt-lossy" -> txtLossy = true;
      case "no-clobber" -> noClobber = true;
      case "open" -> open = true;
      case "stop" -> stop = true;
      case "query" -> query = true;
      case "query-raw" -> {
        query = true;
        queryRaw = true;
      }
      case "long" -> queryLong = true;
      case "system" -> system = true;
      case "version" -> version = true;
      default -> throw new UsageException("unknown option --" + name);
    }
  }

  private static String nonEmpty(String name, String value) throws UsageException {
    if (value.isEmpty()) {
      throw new UsageException("--" + name + " needs a non-empty key");
    }
    return value;
  }

  boolean hasLightOptions() {
    return time != null || buffer != null || size != null || !apps.isEmpty() || !categories.isEmpty();
  }

  boolean isAttach() {
    return attachKey != null;
  }

  boolean isDetach() {
    return detachKey != null;
  }

  boolean isClone() {
    return cloneSessionId != null || cloneName != null;
  }

  /** Checks the combinations upstream rejects, with upstream's reasons. */
  void validate() throws UsageException {
    if (query && (isDetach() || isAttach() || background)) {
      throw new UsageException("--query cannot be combined with any other argument");
    }
    if (queryLong && !query) {
      throw new UsageException("--long can only be used with --query");
    }
    if (isDetach() && isAttach()) {
      throw new UsageException("--attach and --detach are mutually exclusive");
    }
    if (txt && txtLossy) {
      throw new UsageException("--txt and --txt-lossy are mutually exclusive");
    }
    if (isDetach() && background) {
      throw new UsageException("--detach and --background are mutually exclusive");
    }
    if (stop && !isAttach()) {
      throw new UsageException("--stop is supported only in combination with --attach");
    }
    if (cloneSessionId != null && cloneName != null) {
      throw new UsageException("--clone and --clone-by-name are mutually exclusive");
    }
    boolean willTrace = !isAttach() && !query;
    if (!willTrace && (configFile != null || hasLightOptions())) {
      throw new UsageException("Cannot specify a trace config with this option");
    }
    if (willTrace && configFile != null && hasLightOptions()) {
      throw new UsageException("Cannot specify both -c/--config and any of --time, --size, --buffer, "
          + "--app, or categories");
    }
    if (!willTrace && out != null) {
      throw new UsageException("Can't pass an --out file with this option");
    }
  }
}
