/**
 * jperfetto: a pure-Java implementation of the Perfetto tracing service, producer library and
 * consumer command line, wire- and ABI-compatible with upstream Perfetto.
 *
 * <p>The FFM downcalls in {@code org.jperfetto.os} are restricted methods: run with
 * {@code --enable-native-access=org.jperfetto} (see jdk-requirements.md).
 */
// protobuf-java is an automatic module (its jar names itself, no module-info): the exported protos
// extend its types, so users must read it, and javac's warning about that is expected.
@SuppressWarnings("requires-transitive-automatic")
module org.jperfetto {
  requires transitive com.google.protobuf;
  requires java.logging;
  // jdk.jfr.consumer.RecordingStream: the jvm.jfr data source streams the JVM's own events (and
  // StackSampleEncoder's API takes JFR's recorded stacks).
  requires transitive jdk.jfr;
  // `jperfetto attach` drives another JVM's Flight Recorder over JMX (RemoteRecordingStream), through
  // the local connector the Attach API starts in it (the RMI connector: java.management.rmi).
  // RemoteJfr's API names the MBean server connection and the FlightRecorderMXBean.
  requires transitive jdk.management.jfr;
  requires transitive java.management;
  requires java.management.rmi;
  // sun.misc.Signal: jperfetto stops a session cleanly on SIGINT/SIGTERM and keeps its exit code.
  requires jdk.unsupported;
  // `jperfetto attach PID` loads the agent into a running JVM (Attach API); in the jlink image too.
  requires jdk.attach;
  // `jperfetto open TRACE` serves the file once on 127.0.0.1 for ui.perfetto.dev.
  requires jdk.httpserver;
  // The agent (org.jperfetto.agent) runs only inside a traced JVM, loaded from jperfetto-agent.jar
  // where the JVM resolves java.instrument itself and the jar nests ASM: static, so the jlink image
  // carries neither.
  requires static java.instrument;
  requires static org.objectweb.asm;
  requires static org.objectweb.asm.commons;

  exports org.jperfetto.protos;
  // The consumer client API (enable, flush, read, stop).
  exports org.jperfetto.consumer;
  // The producer library: connection, data sources, TraceWriter; and the TrackEvent API on it.
  exports org.jperfetto.producer;
  // The packet writer a data source's TraceContext hands out (ProtoWriter) and its parts.
  exports org.jperfetto.producer.proto;
  exports org.jperfetto.producer.track;
  // The jvm.jfr data source: JDK Flight Recorder events on the trace's thread tracks.
  exports org.jperfetto.producer.jfr;
  // The in-process backend: an embedded jtraced and this process's producer, for a trace file.
  exports org.jperfetto.tracing;
}
