package example.app;

import com.google.protobuf.Struct;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A small application for the jperfetto agent tests that knows nothing of jperfetto: it is
 * compiled and run against an older protobuf-java of its own. Commands on standard input:
 * RUN (one workload, answered with DONE and a checksum), EXIT.
 */
public final class AgentTargetApp {
  private AgentTargetApp() {}

  public static void main(String[] args) throws Exception {
    // Work is loaded and run once before anyone attaches: an attached agent rewrites it in place.
    Work.compute(0);
    System.out.println("PID " + ProcessHandle.current().pid());
    System.out.println("PROTOBUF " + Struct.class.getProtectionDomain().getCodeSource().getLocation());
    System.out.println("MODULE " + AgentTargetApp.class.getModule().getName());
    System.out.println("READY");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("EXIT"); line = in.readLine()) {
      if (line.equals("RUN")) {
        System.out.println("DONE " + Workload.run());
      }
    }
  }
}
