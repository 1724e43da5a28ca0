package org.jperfetto.agent;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;

/**
 * jperfetto talks to the tracing service through FFM downcalls, which are restricted methods. An
 * agent's code lives in an unnamed module (class path or the agent's own loader), which has native
 * access only when the JVM was started with {@code --enable-native-access=ALL-UNNAMED}; nothing
 * can grant it later, and the {@code Enable-Native-Access} manifest attribute counts only for the
 * main jar of {@code java -jar}. Without the flag JDK 22-25 print a warning and allow the call
 * (the default {@code --illegal-native-access=warn}); with {@code --illegal-native-access=deny} the
 * call fails, and the agent stops here with the flag to add.
 */
final class NativeAccess {
  static final String FLAG = "--enable-native-access=ALL-UNNAMED";

  private NativeAccess() {}

  @SuppressWarnings("restricted") // the probe below is the point: it makes the JDK's warning appear now
  static void check(Module agentModule) {
    if (agentModule.isNativeAccessEnabled()) {
      return;
    }
    System.err.println("jperfetto agent: native access is not enabled for the agent (start the JVM with "
        + FLAG + "); the JDK warns about it now and will refuse it in a later release");
    try {
      // The cheapest restricted call: a downcall handle for getpid, never invoked.
      Linker linker = Linker.nativeLinker();
      linker.downcallHandle(linker.defaultLookup().find("getpid").orElseThrow(),
          FunctionDescriptor.of(ValueLayout.JAVA_INT));
    } catch (IllegalCallerException e) {
      throw new IllegalStateException("this JVM refuses native access to the agent: start it with " + FLAG
          + " (" + e.getMessage() + ")", e);
    }
  }
}
