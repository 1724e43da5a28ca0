package org.jperfetto.os;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a JVM that refuses jperfetto native access (FFM downcalls are restricted methods; with
 * {@code --illegal-native-access=deny} the JDK refuses them to a module not named in {@code
 * --enable-native-access}) gets from us: the flag it needs, logged once in our words, instead of
 * the JDK's bare IllegalCallerException inside an ExceptionInInitializerError.
 */
final class NativeAccessRefused {
  private static final AtomicBoolean SAID = new AtomicBoolean();

  private NativeAccessRefused() {}

  /** The flag that grants this code native access: its module's name, or ALL-UNNAMED on the class path. */
  static String flag() {
    Module module = NativeAccessRefused.class.getModule();
    return "--enable-native-access=" + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
  }

  /** An error that names the flag (logged the first time only), caused by the JDK's refusal. */
  static IllegalCallerException explain(IllegalCallerException refusal) {
    String message = "jperfetto needs native access (the FFM API) and this JVM refuses it: start the JVM with "
        + flag();
    if (SAID.compareAndSet(false, true)) {
      System.getLogger("org.jperfetto").log(System.Logger.Level.ERROR, message);
    }
    return new IllegalCallerException(message, refusal);
  }
}
