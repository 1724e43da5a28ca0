package example.app;

/** The methods the agent tests turn into slices. */
final class Work {
  private Work() {}

  static int compute(int i) {
    return leaf(i) + 1;
  }

  static int leaf(int i) {
    return i * 2;
  }

  static void fail(int i) {
    throw new IllegalStateException("failure " + i);
  }

  /** Catches what fail throws: the method's own handler must still come first. */
  static int recovers(int i) {
    try {
      fail(i);
      return 0;
    } catch (IllegalStateException e) {
      return 1;
    }
  }
}
