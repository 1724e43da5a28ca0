// The agent tests' application when it runs on the module path.
module example.app {
  requires com.google.protobuf;
}
