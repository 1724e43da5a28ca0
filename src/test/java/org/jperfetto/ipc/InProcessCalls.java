package org.jperfetto.ipc;

import com.google.protobuf.ByteString;
import java.util.function.Consumer;
import org.jperfetto.protos.IPCFrame;

/**
 * Method calls made without a socket, for driving a service's handlers straight from a test (a
 * fuzz target): replies go to a callback as the frames the host would send; the connection never
 * has bytes unsent.
 */
public final class InProcessCalls {
  private InProcessCalls() {}

  /** A call of service.method (id methodId) by client, its replies going to replies. */
  public static MethodCall call(ClientInfo client, ServiceDefinition service, int methodId, long requestId,
      ByteString args, Consumer<IPCFrame> replies) {
    MethodCall.ReplyChannel channel = new MethodCall.ReplyChannel() {
      @Override
      public void sendReply(IPCFrame frame, int fd) {
        org.jperfetto.os.Fds.closeQuietly(fd);
        replies.accept(frame);
      }

      @Override
      public long unsentBytes() {
        return 0;
      }

      @Override
      public void whenUnsentBelow(long bytes, Runnable task) {
        task.run();
      }
    };
    ServiceDefinition.Method method = service.methods().get(methodId - 1);
    return new MethodCall(channel, client, service.name(), method.name(), methodId, requestId, args, true, -1);
  }
}
