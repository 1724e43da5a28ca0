package org.jperfetto.agent;

import java.lang.System.Logger.Level;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jperfetto.agent.boot.MethodHooks;

/**
 * Rewrites the classes {@link MethodPatterns} names as they load (and, for a JVM the agent joins
 * late, the ones already loaded) with {@link MethodRewriter}. The patterns are the agent options'
 * plus those of the running {@code jvm.methods} instances ({@link MethodsDataSource}): when one
 * starts or stops, the loaded classes its patterns name are retransformed, so a class no pattern
 * names any more is back to its original bytecode. Classes whose loader cannot see
 * {@link MethodHooks} (the JDK's own, or loaders that do not delegate to the system class loader)
 * are left alone and logged; a class in a named module is made to read the hooks' module first.
 */
final class MethodTransformer implements ClassFileTransformer {
  private static final System.Logger LOG = System.getLogger(MethodTransformer.class.getName());

  private final Instrumentation inst;
  private final MethodPatterns fromOptions;
  private final Map<Long, MethodPatterns> fromSessions = new LinkedHashMap<>();
  private volatile MethodPatterns patterns;
  private final MethodTable table;
  private final Module hooksModule = MethodHooks.class.getModule();

  MethodTransformer(Instrumentation inst, MethodPatterns fromOptions, MethodTable table) {
    this.inst = inst;
    this.fromOptions = fromOptions;
    this.patterns = fromOptions;
    this.table = table;
  }

  /** Registers itself and rewrites the matching classes already loaded; returns how many those were. */
  int install() {
    inst.addTransformer(this, true);
    return retransformMatching(fromOptions);
  }

  /** Adds a session's patterns and rewrites the loaded classes they name; returns how many. */
  synchronized int addSessionPatterns(long instanceId, MethodPatterns p) {
    fromSessions.put(instanceId, p);
    update();
    return retransformMatching(p);
  }

  /** Removes a session's patterns; the loaded classes they named get their bytecode back. */
  synchronized void removeSessionPatterns(long instanceId) {
    MethodPatterns p = fromSessions.remove(instanceId);
    if (p != null) {
      update();
      retransformMatching(p);
    }
  }

  private void update() {
    List<MethodPatterns.Entry> all = new ArrayList<>(fromOptions.entries());
    fromSessions.values().forEach(p -> all.addAll(p.entries()));
    patterns = new MethodPatterns(all);
  }

  MethodPatterns patterns() {
    return patterns;
  }

  private int retransformMatching(MethodPatterns which) {
    if (which.isEmpty()) {
      return 0;
    }
    List<Class<?>> loaded = new ArrayList<>();
    for (Class<?> c : inst.getAllLoadedClasses()) {
      if (!c.isArray() && !c.isPrimitive() && !c.isHidden() && which.matchesClass(c.getName())
          && inst.isModifiableClass(c) && candidate(c.getName(), c.getClassLoader())) {
        loaded.add(c);
      }
    }
    for (Class<?> c : loaded) {
      try {
        inst.retransformClasses(c);
      } catch (UnmodifiableClassException | RuntimeException | LinkageError e) {
        LOG.log(Level.WARNING, "jperfetto agent: cannot rewrite loaded class " + c.getName() + ": " + e);
      }
    }
    return loaded.size();
  }

  private boolean candidate(String className, ClassLoader loader) {
    if (loader == null || className.startsWith("org.jperfetto.") || loader == getClass().getClassLoader()) {
      return false;
    }
    try {
      if (Class.forName(MethodHooks.class.getName(), false, loader) == MethodHooks.class) {
        return true;
      }
    } catch (ClassNotFoundException | LinkageError e) {
      // falls through
    }
    LOG.log(Level.WARNING, "jperfetto agent: " + className + " matches a method pattern but its class loader "
        + loader + " does not see the agent's hooks; not instrumented");
    return false;
  }

  @Override
  public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
      ProtectionDomain domain, byte[] classFile) {
    if (internalName == null) {
      return null;
    }
    String className = internalName.replace('/', '.');
    MethodPatterns p = patterns;
    if (!p.matchesClass(className) || !candidate(className, loader)) {
      return null;
    }
    try {
      byte[] out = MethodRewriter.rewrite(classFile, className, p, table::add);
      if (out != null && module != null && module.isNamed() && !module.canRead(hooksModule)) {
        inst.redefineModule(module, Set.of(hooksModule), Map.of(), Map.of(), Set.of(), Map.of());
      }
      return out;
    } catch (RuntimeException | LinkageError e) {
      LOG.log(Level.WARNING, "jperfetto agent: cannot rewrite " + className + "; left as it is: " + e);
      return null;
    }
  }
}
