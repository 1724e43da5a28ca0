package example.paired;

/**
 * The method the agent instruments in org.jperfetto.agent.PairedApp (method slices, category
 * jvm.method); outside org.jperfetto, which the agent never rewrites.
 */
public final class PairedAppWork {
  private PairedAppWork() {}

  public static long step(int i) {
    return (long) i * i % 7;
  }
}
