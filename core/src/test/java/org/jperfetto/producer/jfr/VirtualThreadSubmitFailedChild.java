package org.jperfetto.producer.jfr;

import java.lang.reflect.Constructor;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import jdk.jfr.Recording;

/**
 * A child JVM (needs {@code --add-opens java.base/java.lang=ALL-UNNAMED}) that makes JFR record
 * jdk.VirtualThreadSubmitFailed: it starts a virtual thread on a scheduler that rejects every task,
 * through the JDK's non-public VirtualThreadBuilder(Executor) constructor (there is no public way to
 * give a virtual thread a scheduler), and dumps the recording to args[0], which the parent reads.
 */
public final class VirtualThreadSubmitFailedChild {
  static final String MESSAGE = "jperfetto test scheduler refuses";

  public static void main(String[] args) throws Exception {
    Class<?> builderClass = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder");
    Constructor<?> withScheduler = builderClass.getDeclaredConstructor(Executor.class);
    withScheduler.setAccessible(true);
    Executor refusing = task -> {
      throw new RejectedExecutionException(MESSAGE);
    };
    Thread.Builder builder = (Thread.Builder) withScheduler.newInstance(refusing);
    try (Recording r = new Recording()) {
      r.setSettings(JfrConfig.parse("groups=vthreads").settings());
      r.start();
      try {
        builder.name("jfr-refused").start(() -> { });
        throw new IllegalStateException("the refusing scheduler ran the thread");
      } catch (RejectedExecutionException expected) {
        // The submit failed, which is the point.
      }
      r.stop();
      r.dump(Path.of(args[0]));
    }
  }
}
