package org.jperfetto.agent;

import java.io.IOException;
import java.io.InputStream;

/**
 * A fresh copy of a class, rewritten by {@link MethodRewriter} for patterns, in a loader of its own
 * (the original stays as it is): what the agent's transformer would produce, without an agent.
 * Shared by the rewriter's tests and the hooks' benchmark.
 */
public final class InstrumentedCopy extends ClassLoader {
  private final String name;
  private final byte[] rewritten;

  private InstrumentedCopy(String name, byte[] rewritten, ClassLoader parent) {
    super("instrumented " + name, parent);
    this.name = name;
    this.rewritten = rewritten;
  }

  /** The rewritten copy of c; ids are assigned by table. */
  static Class<?> of(Class<?> c, MethodPatterns patterns, MethodTable table) throws IOException {
    byte[] out = MethodRewriter.rewrite(classFile(c), c.getName(), patterns, table::add);
    if (out == null) {
      throw new IOException("no method of " + c.getName() + " matches " + patterns);
    }
    try {
      return Class.forName(c.getName(), true, new InstrumentedCopy(c.getName(), out, c.getClassLoader()));
    } catch (ClassNotFoundException e) {
      throw new IOException(e);
    }
  }

  /** The class file c was loaded from. */
  static byte[] classFile(Class<?> c) throws IOException {
    try (InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
      if (in == null) {
        throw new IOException("no class file for " + c.getName());
      }
      return in.readAllBytes();
    }
  }

  @Override
  protected Class<?> loadClass(String n, boolean resolve) throws ClassNotFoundException {
    if (!n.equals(name)) {
      return super.loadClass(n, resolve);
    }
    synchronized (getClassLoadingLock(n)) {
      Class<?> c = findLoadedClass(n);
      if (c == null) {
        c = defineClass(n, rewritten, 0, rewritten.length);
      }
      return c;
    }
  }
}
