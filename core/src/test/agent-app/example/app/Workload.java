package example.app;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** One run: fixed numbers of calls on this thread and on virtual threads, collections, protobuf. */
final class Workload {
  static final int CALLS = 50;
  static final int VIRTUAL_THREADS = 4;
  static final int COLLECTIONS = 3;

  private Workload() {}

  static long run() throws Exception {
    long sum = 0;
    for (int i = 0; i < CALLS; i++) {
      sum += Work.compute(i);
      sum += Work.recovers(i);
    }
    List<Future<Integer>> results = new ArrayList<>();
    try (ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int t = 0; t < VIRTUAL_THREADS; t++) {
        results.add(virtual.submit(() -> {
          int s = 0;
          for (int i = 0; i < CALLS; i++) {
            s += Work.compute(i);
            if (i % 10 == 0) {
              Thread.sleep(1); // unmounts: the rest may run on another carrier
            }
          }
          return s;
        }));
      }
    }
    for (Future<Integer> f : results) {
      sum += f.get();
    }
    for (int i = 0; i < COLLECTIONS; i++) {
      byte[][] garbage = new byte[64][];
      for (int j = 0; j < garbage.length; j++) {
        garbage[j] = new byte[16 * 1024];
      }
      sum += garbage.length;
      System.gc();
    }
    // The app's own protobuf-java (3.x) still works with the agent's (4.x) in the same JVM.
    Struct s = Struct.newBuilder().putFields("sum", Value.newBuilder().setNumberValue(sum).build()).build();
    Struct back = Struct.parseFrom(s.toByteArray());
    if (back.getFieldsOrThrow("sum").getNumberValue() != sum) {
      throw new AssertionError("protobuf round trip");
    }
    return sum;
  }
}
