package org.jperfetto.agent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jperfetto.producer.TracingProducer;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.TrackEvent;

/**
 * The child of {@link AgentBesideAppTrackEventIT}: an app with its own TrackEvent (category
 * {@code app}) on its own producer, run with the agent, which instruments {@code
 * example.paired.PairedAppWork}.
 * Args: the producer socket and the producer name. Prints READY once connected; RUN: N slices
 * "app_work", each around a call of an instrumented method, answered with DONE; EXIT.
 */
public final class PairedApp {
  static final int N = 300;

  private PairedApp() {}

  /**
   * PairedAppWork.step from a loader of its own. This child runs on the test class path, where
   * jperfetto's classes sit in a directory ahead of the agent jar: the agent then loads from the
   * application class loader too (see AgentBoot.isolatedLoader) and leaves that loader's classes
   * alone, so the instrumented class must come from another loader that sees the same hooks.
   */
  private static MethodHandle workStep() throws ReflectiveOperationException {
    URL classes = PairedApp.class.getProtectionDomain().getCodeSource().getLocation();
    ClassLoader loader = new URLClassLoader("paired-work", new URL[] {classes}, PairedApp.class.getClassLoader()) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.startsWith("example.paired.")) {
          return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
          Class<?> c = findLoadedClass(name);
          return c != null ? c : findClass(name);
        }
      }
    };
    return MethodHandles.publicLookup().findStatic(Class.forName("example.paired.PairedAppWork", true, loader),
        "step", MethodType.methodType(long.class, int.class));
  }

  public static void main(String[] args) throws Throwable {
    MethodHandle step = workStep();
    Category app = Category.of("app");
    TrackEvent te = TrackEvent.builder().categories(app).processName("paired_app").build();
    try (TracingProducer producer = TracingProducer.builder(args[1]).socketPath(args[0])
        .dataSource(te.dataSource()).start()) {
      if (!producer.awaitConnected(Duration.ofSeconds(30))) {
        throw new IllegalStateException("no service on " + args[0]);
      }
      System.out.println("READY");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null && !line.equals("EXIT"); line = in.readLine()) {
        if (line.equals("RUN")) {
          long sum = 0;
          for (int i = 0; i < N; i++) {
            te.begin(app, "app_work", "i", i);
            sum += (long) step.invokeExact(i);
            te.end(app);
          }
          te.flush();
          System.out.println("DONE " + sum);
        }
      }
    }
  }
}
