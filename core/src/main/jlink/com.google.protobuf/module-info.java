// Module descriptor we add to protobuf-java, which ships only an Automatic-Module-Name: jlink
// accepts named modules only. Checked against protobuf-java 3.25.5 and 4.33.0 with
// `jdeps --generate-module-info` (PackagingIT compiles it against the real jar on every test run).
module com.google.protobuf {
  // CodedOutputStream and friends use sun.misc.Unsafe when present.
  requires jdk.unsupported;
  // Descriptors and GeneratedMessage log through java.util.logging.
  requires java.logging;

  exports com.google.protobuf;
  exports com.google.protobuf.compiler;
}
