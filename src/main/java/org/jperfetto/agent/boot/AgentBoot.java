package org.jperfetto.agent.boot;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The agent's start on JDK 22+, called by {@code AgentEntry} (the jar's {@code Premain-Class} and
 * {@code Agent-Class}, compiled for Java 8 so that it can check the JDK first). It loads jperfetto
 * and the libraries it needs (protobuf-java, ASM) from jars nested in the agent jar into a class
 * loader of their own, whose parent is the platform class loader: the application's own
 * protobuf-java (any version) and jperfetto never see each other. Only this package is shared,
 * since instrumented application code calls {@link MethodHooks}.
 *
 * <p>A failure at start never stops the application: it is reported on standard error with what
 * to do, and the application runs untraced. The outcome is also left in the system property
 * {@link #STATUS}, where {@code jperfetto attach} reads it back and names the cause; nothing is
 * thrown to the JVM, which would print a stack trace on the application's standard error.
 */
public final class AgentBoot {
  /** Where the nested jars sit inside the agent jar. */
  public static final String LIB_DIR = "META-INF/jperfetto/lib/";
  static final String AGENT_CLASS = "org.jperfetto.agent.JperfettoAgent";
  /**
   * The system property in the traced JVM that says how the last start of the agent went:
   * {@code started}, or {@code failed: WHY}.
   */
  public static final String STATUS = "jperfetto.agent.status";
  private static boolean started;

  private AgentBoot() {}

  /** {@code -javaagent:jperfetto-agent.jar[=options]}. */
  public static void premain(String options, Instrumentation inst) {
    start(options, inst, false);
  }

  /** Loaded into a running JVM ({@code jperfetto attach PID}). */
  public static void agentmain(String options, Instrumentation inst) {
    start(options, inst, true);
  }

  private static void start(String options, Instrumentation inst, boolean dynamic) {
    try {
      boot(options, inst, dynamic);
      System.setProperty(STATUS, "started");
    } catch (Exception | LinkageError e) {
      System.setProperty(STATUS, "failed: " + message(e));
      System.err.println("jperfetto agent: not started: " + message(e));
    }
  }

  private static synchronized void boot(String options, Instrumentation inst, boolean dynamic) throws Exception {
    if (started) {
      System.err.println("jperfetto agent: already running in this JVM; ignored the second load (options: "
          + options + ")");
      return;
    }
    ClassLoader loader = isolatedLoader();
    try {
      Class.forName(AGENT_CLASS, true, loader)
          .getMethod("start", String.class, Instrumentation.class, boolean.class)
          .invoke(null, options, inst, dynamic);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
    started = true;
  }

  private static String message(Throwable e) {
    return e.getMessage() != null ? e.getMessage() : e.toString();
  }

  /**
   * The loader of jperfetto inside the agent: the nested jars, copied out to a private temporary
   * directory (removed at exit). Without nested jars (this class loaded from a class directory, as
   * in an IDE), jperfetto is already on this class's own loader and that is used instead.
   *
   * <p>An application with jperfetto's own jar on its class path has this class in that jar too,
   * ahead of the agent jar the JVM appended: then the agent jar is found on the class path by the
   * jperfetto jar nested in it.
   */
  static ClassLoader isolatedLoader() throws IOException {
    Path self = jarOf(AgentBoot.class.getProtectionDomain().getCodeSource().getLocation(), "the agent jar");
    if (!Files.isRegularFile(self)) {
      return AgentBoot.class.getClassLoader();
    }
    Path dir = Files.createTempDirectory("jperfetto-agent");
    dir.toFile().deleteOnExit();
    List<URL> urls = copyNestedJars(self, dir);
    Path agentJar = self;
    if (urls.isEmpty()) {
      agentJar = agentJarOnClassPath(self);
      if (agentJar != null) {
        urls = copyNestedJars(agentJar, dir);
      }
    }
    if (urls.isEmpty()) {
      throw new IOException((agentJar != null ? agentJar : self) + " holds no " + LIB_DIR
          + "*.jar: not a jperfetto agent jar");
    }
    return new IsolatingLoader(urls.toArray(URL[]::new), AgentBoot.class.getClassLoader());
  }

  private static Path jarOf(URL location, String what) throws IOException {
    try {
      return Path.of(location.toURI());
    } catch (URISyntaxException | RuntimeException e) {
      throw new IOException("cannot locate " + what + ": " + e, e);
    }
  }

  /** Another jar on this class's loader that nests jperfetto, or null. */
  private static Path agentJarOnClassPath(Path self) throws IOException {
    Enumeration<URL> found = AgentBoot.class.getClassLoader().getResources(LIB_DIR + "jperfetto.jar");
    while (found.hasMoreElements()) {
      URL u = found.nextElement();
      String path = u.getPath();
      int bang = path.indexOf("!/");
      if (!"jar".equals(u.getProtocol()) || bang < 0) {
        continue;
      }
      Path jar;
      try {
        jar = Path.of(java.net.URI.create(path.substring(0, bang)));
      } catch (RuntimeException e) {
        continue; // not a file on this machine
      }
      if (!jar.equals(self)) {
        return jar;
      }
    }
    return null;
  }

  /** The jars nested under {@link #LIB_DIR} in jar, copied into dir (removed at exit). */
  private static List<URL> copyNestedJars(Path agentJar, Path dir) throws IOException {
    List<URL> urls = new ArrayList<>();
    try (JarFile jar = new JarFile(agentJar.toFile())) {
      Enumeration<JarEntry> entries = jar.entries();
      while (entries.hasMoreElements()) {
        JarEntry e = entries.nextElement();
        String name = e.getName();
        if (!name.startsWith(LIB_DIR) || !name.endsWith(".jar") || name.indexOf('/', LIB_DIR.length()) >= 0) {
          continue;
        }
        Path out = dir.resolve(name.substring(LIB_DIR.length()));
        try (InputStream in = jar.getInputStream(e)) {
          Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
        }
        out.toFile().deleteOnExit();
        urls.add(out.toUri().toURL());
      }
    }
    return urls;
  }

  /**
   * Child-first over the nested jars, then the platform class loader (the JDK); only this package
   * comes from the agent jar's loader. Child-first matters: for a package of a named module in the
   * boot layer (an application's protobuf-java on the module path) the platform loader hands the
   * request to that module's loader, so parent-first would give jperfetto the application's copy.
   */
  static final class IsolatingLoader extends URLClassLoader {
    private static final String SHARED = AgentBoot.class.getPackageName() + ".";
    private final ClassLoader shared;

    static {
      registerAsParallelCapable();
    }

    IsolatingLoader(URL[] urls, ClassLoader shared) {
      super("jperfetto-agent", urls, ClassLoader.getPlatformClassLoader());
      this.shared = shared;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.startsWith(SHARED) && name.indexOf('.', SHARED.length()) < 0) {
        return shared.loadClass(name);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c == null && !name.startsWith("java.")) {
          try {
            c = findClass(name);
          } catch (ClassNotFoundException e) {
            // not in the nested jars: a JDK class
          }
        }
        if (c == null) {
          c = super.loadClass(name, false);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }

    @Override
    public URL getResource(String name) {
      URL url = findResource(name);
      return url != null ? url : super.getResource(name);
    }
  }
}
