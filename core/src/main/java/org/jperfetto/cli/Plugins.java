package org.jperfetto.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Where the CLI finds what other parts provide: the {@link EmbeddedService.Factory} and the
 * {@link Subcommand}s. Registered instances come first, then {@link ServiceLoader} providers (in
 * the module, {@code module-info} must declare {@code uses} for both interfaces; without it the
 * loader finds nothing here and says so).
 */
public final class Plugins {
  private static final Map<Class<?>, List<Object>> REGISTERED = new ConcurrentHashMap<>();

  private Plugins() {}

  /** Registers {@code instance} as a provider of {@code type} (ahead of ServiceLoader ones). */
  public static <T> void register(Class<T> type, T instance) {
    REGISTERED.computeIfAbsent(type, t -> new CopyOnWriteArrayList<>()).add(0, instance);
  }

  /** Removes a registered provider (tests). */
  public static <T> void unregister(Class<T> type, T instance) {
    List<Object> list = REGISTERED.get(type);
    if (list != null) {
      list.remove(instance);
    }
  }

  /** The providers of {@code type}: registered ones, then those ServiceLoader finds. */
  public static <T> List<T> all(Class<T> type) {
    List<T> out = new ArrayList<>();
    for (Object o : REGISTERED.getOrDefault(type, List.of())) {
      out.add(type.cast(o));
    }
    try {
      ServiceLoader.load(type, Plugins.class.getClassLoader()).forEach(out::add);
    } catch (ServiceConfigurationError e) {
      System.getLogger(Plugins.class.getName()).log(System.Logger.Level.DEBUG,
          "no ServiceLoader providers of " + type.getName() + ": " + e.getMessage());
    }
    return out;
  }
}
