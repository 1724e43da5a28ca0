package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.jperfetto.agent.boot.MethodHooks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The rewritten bytecode verifies, behaves as before, and calls the hooks once per entry and exit. */
class MethodRewriterTest {
  private final MethodTable table = new MethodTable();
  private final List<String> calls = new ArrayList<>();
  private Class<?> copy;

  @BeforeEach
  void instrument() throws Exception {
    copy = InstrumentedCopy.of(RewriteTarget.class, MethodPatterns.parse(List.of(
        RewriteTarget.class.getName() + "#*", RewriteTarget.class.getName() + "#<init>")), table);
    MethodHooks.install(new MethodHooks.Sink() {
      @Override
      public void enter(int methodId) {
        calls.add("+" + table.name(methodId));
      }

      @Override
      public void exit(int methodId) {
        calls.add("-" + table.name(methodId));
      }
    });
    MethodHooks.setEnabled(true);
  }

  @AfterEach
  void uninstall() {
    MethodHooks.setEnabled(false);
    MethodHooks.install(null);
  }

  private Object call(String name, Class<?>[] types, Object... args) throws Throwable {
    Method m = copy.getMethod(name, types);
    try {
      return m.invoke(null, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void nestedCallsEnterAndExitInOrder() throws Throwable {
    assertEquals(5 * 2 + 6 * 2, call("nested", new Class<?>[] {int.class}, 5));
    assertEquals(List.of("+RewriteTarget.nested", "+RewriteTarget.leaf", "-RewriteTarget.leaf",
        "+RewriteTarget.leaf", "-RewriteTarget.leaf", "-RewriteTarget.nested"), calls);
  }

  @Test
  void anExceptionLeavingTheMethodEndsItsSliceAndStillPropagates() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> call("thrower", new Class<?>[] {String.class}, "boom"));
    assertEquals("boom", e.getMessage());
    assertEquals(List.of("+RewriteTarget.thrower", "-RewriteTarget.thrower"), calls);
  }

  @Test
  void theMethodsOwnHandlerStillCatchesFirst() throws Throwable {
    assertEquals("caught x", call("recovers", new Class<?>[] {String.class}, "x"));
    assertEquals(List.of("+RewriteTarget.recovers", "+RewriteTarget.thrower", "-RewriteTarget.thrower",
        "-RewriteTarget.recovers"), calls);
  }

  @Test
  void everyReturnPathExitsOnce() throws Throwable {
    for (int n = 0; n < 6; n++) {
      calls.clear();
      Object expected = RewriteTarget.branches(n, 3L);
      assertEquals(expected, call("branches", new Class<?>[] {int.class, long.class}, n, 3L));
      assertEquals(List.of("+RewriteTarget.branches", "-RewriteTarget.branches"), calls, "n=" + n);
    }
  }

  @Test
  void constructorsEnterAfterTheirSuperCall() throws Exception {
    Object o = copy.getConstructor().newInstance();
    assertEquals(7, copy.getDeclaredField("base").getInt(o));
    // The no-argument constructor delegates to this(7); its own slice begins after that call.
    assertEquals(List.of("+RewriteTarget.RewriteTarget", "-RewriteTarget.RewriteTarget",
        "+RewriteTarget.RewriteTarget", "-RewriteTarget.RewriteTarget"), calls);
    calls.clear();
    assertEquals(10, copy.getMethod("instance", int.class).invoke(o, 3));
    assertEquals(List.of("+RewriteTarget.instance", "-RewriteTarget.instance"), calls);
  }

  @Test
  void syntheticLambdaBodiesAreNotSlices() throws Throwable {
    assertEquals(2 + 3, call("viaLambda", new Class<?>[] {List.class}, List.of(1, 2)));
    assertEquals(List.of("+RewriteTarget.viaLambda", "-RewriteTarget.viaLambda"), calls);
  }

  @Test
  void synchronizedMethodsReleaseTheirMonitor() throws Throwable {
    assertEquals(2, call("locked", new Class<?>[] {int.class}, 1));
    assertEquals(List.of("+RewriteTarget.locked", "-RewriteTarget.locked"), calls);
  }

  @Test
  void disabledHooksCallNothing() throws Throwable {
    MethodHooks.setEnabled(false);
    assertEquals(6, call("nested", new Class<?>[] {int.class}, 1));
    assertEquals(List.of(), calls);
  }

  @Test
  void aClassWithoutMatchingMethodsIsLeftAlone() throws Exception {
    byte[] original = InstrumentedCopy.classFile(RewriteTarget.class);
    assertNull(MethodRewriter.rewrite(original, RewriteTarget.class.getName(),
        MethodPatterns.parse(List.of(RewriteTarget.class.getName() + "#absent")), n -> 0));
    assertNull(MethodRewriter.rewrite(original, RewriteTarget.class.getName(), MethodPatterns.NONE, n -> 0));
  }
}
