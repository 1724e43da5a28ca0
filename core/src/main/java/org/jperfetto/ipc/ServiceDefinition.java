package org.jperfetto.ipc;

import com.google.protobuf.Descriptors;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A service the host exposes: its name and its methods in declaration order. The method id a client
 * invokes is the list index + 1, as upstream assigns them.
 *
 * @param name e.g. "ProducerPort"
 * @param methods in .proto declaration order
 * @param listener bind/disconnect notifications
 */
public record ServiceDefinition(String name, List<Method> methods, ServiceListener listener) {
  /**
   * One method: its name on the wire, its handler, and optionally a handler that may serve calls
   * from the request bytes in place ({@link RawMethodHandler}; null: every call is decoded).
   */
  public record Method(String name, MethodHandler handler, RawMethodHandler raw) {
    public Method {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(handler, "handler");
    }

    public Method(String name, MethodHandler handler) {
      this(name, handler, null);
    }
  }

  /** This definition with {@code raw} serving method {@code methodName} where it can. */
  public ServiceDefinition withRawHandler(String methodName, RawMethodHandler raw) {
    int id = methodId(methodName);
    if (id == 0) {
      throw new IllegalArgumentException("service " + name + " has no method " + methodName);
    }
    List<Method> list = new ArrayList<>(methods);
    Method m = list.get(id - 1);
    list.set(id - 1, new Method(m.name(), m.handler(), Objects.requireNonNull(raw, "raw")));
    return new ServiceDefinition(name, list, listener);
  }

  public ServiceDefinition {
    Objects.requireNonNull(name, "name");
    methods = List.copyOf(methods);
    Objects.requireNonNull(listener, "listener");
    Set<String> seen = new HashSet<>();
    for (Method m : methods) {
      if (!seen.add(m.name())) {
        throw new IllegalArgumentException("duplicate method in service " + name + ": " + m.name());
      }
    }
  }

  /** The id clients invoke {@code methodName} by, or 0 if the service has no such method. */
  public int methodId(String methodName) {
    for (int i = 0; i < methods.size(); i++) {
      if (methods.get(i).name().equals(methodName)) {
        return i + 1;
      }
    }
    return 0;
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  /**
   * A definition whose methods are those of {@code service}, in .proto order, each served by the
   * handler of the same name in {@code handlers}. A method without a handler is still listed (its
   * id stays stable) and answers every call with a failed reply.
   *
   * @throws IllegalArgumentException if a handler names no method of the service
   */
  public static ServiceDefinition fromDescriptor(Descriptors.ServiceDescriptor service,
      Map<String, MethodHandler> handlers, ServiceListener listener) {
    return fromMethodNames(service.getName(),
        service.getMethods().stream().map(Descriptors.MethodDescriptor::getName).toList(), handlers, listener);
  }

  /**
   * As {@link #fromDescriptor}, with the method names given in .proto declaration order: for a
   * host that should not build protobuf descriptors (all of a .proto's imports) just to learn
   * them. Whoever spells the list out keeps a test that compares it with the descriptor.
   */
  public static ServiceDefinition fromMethodNames(String service, List<String> methodNames,
      Map<String, MethodHandler> handlers, ServiceListener listener) {
    Builder builder = builder(service).listener(listener);
    Set<String> unused = new HashSet<>(handlers.keySet());
    for (String method : methodNames) {
      MethodHandler handler = handlers.get(method);
      unused.remove(method);
      builder.method(method, handler != null ? handler : MethodCall::fail);
    }
    if (!unused.isEmpty()) {
      throw new IllegalArgumentException(
          "handlers for methods service " + service + " does not declare: " + unused);
    }
    return builder.build();
  }

  /** Collects methods in order. */
  public static final class Builder {
    private final String name;
    private final List<Method> methods = new ArrayList<>();
    private ServiceListener listener = new ServiceListener() {};

    private Builder(String name) {
      this.name = name;
    }

    /** Adds the next method (id = number of methods so far + 1). */
    public Builder method(String methodName, MethodHandler handler) {
      methods.add(new Method(methodName, handler));
      return this;
    }

    public Builder listener(ServiceListener serviceListener) {
      this.listener = Objects.requireNonNull(serviceListener, "listener");
      return this;
    }

    public ServiceDefinition build() {
      return new ServiceDefinition(name, methods, listener);
    }
  }
}
