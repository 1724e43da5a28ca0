package org.jperfetto.agent;

import java.util.List;

/** Methods of every shape the rewriter meets; MethodRewriterTest runs an instrumented copy. */
public class RewriteTarget {
  public final int base;

  public RewriteTarget(int base) {
    this.base = base;
  }

  public RewriteTarget() {
    this(7);
  }

  public static int leaf(int x) {
    return x * 2;
  }

  public static int nested(int x) {
    return leaf(x) + leaf(x + 1);
  }

  public static void thrower(String message) {
    throw new IllegalStateException(message);
  }

  /** Its own handler must catch first: the rewriter's catch-all comes after it. */
  public static String recovers(String message) {
    try {
      thrower(message);
      return "not thrown";
    } catch (IllegalStateException e) {
      return "caught " + e.getMessage();
    }
  }

  /** Several returns, a loop, a long and a double in locals: frames must survive. */
  public static double branches(int n, long l) {
    double acc = 0;
    for (int i = 0; i < n; i++) {
      if (i % 3 == 0) {
        acc += l;
      } else if (i % 3 == 1) {
        continue;
      } else {
        return acc + i;
      }
    }
    return acc;
  }

  public int instance(int x) {
    return base + x;
  }

  /** A lambda: synthetic, so its body is not a slice of its own. */
  public static int viaLambda(List<Integer> xs) {
    return xs.stream().mapToInt(x -> x + 1).sum();
  }

  public static synchronized int locked(int x) {
    return x + 1;
  }
}
