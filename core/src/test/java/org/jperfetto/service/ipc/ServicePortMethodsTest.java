package org.jperfetto.service.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Descriptors;
import java.util.List;
import org.jperfetto.protos.ConsumerPortOuterClass;
import org.jperfetto.protos.ProducerPortOuterClass;
import org.jperfetto.protos.RelayPortOuterClass;
import org.junit.jupiter.api.Test;

/** The spelled-out method lists of the ports match the .proto declarations (names and ids). */
class ServicePortMethodsTest {
  static List<String> declared(Descriptors.FileDescriptor file, String service) {
    return file.findServiceByName(service).getMethods().stream().map(Descriptors.MethodDescriptor::getName).toList();
  }

  @Test
  void producerPortMethodsInDeclarationOrder() {
    assertEquals(declared(ProducerPortOuterClass.getDescriptor(), ProducerPortService.SERVICE_NAME),
        ProducerPortService.METHODS);
  }

  @Test
  void consumerPortMethodsInDeclarationOrder() {
    assertEquals(declared(ConsumerPortOuterClass.getDescriptor(), ConsumerPortService.SERVICE_NAME),
        ConsumerPortService.METHODS);
  }

  @Test
  void relayPortMethodsInDeclarationOrder() {
    assertEquals(declared(RelayPortOuterClass.getDescriptor(), RelayPortService.SERVICE_NAME),
        RelayPortService.METHODS);
  }
}
