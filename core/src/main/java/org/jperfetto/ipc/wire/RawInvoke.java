package org.jperfetto.ipc.wire;

import java.lang.foreign.MemorySegment;
import org.jperfetto.wire.ProtoCursor;

/**
 * An IPCFrame read in place as an InvokeMethod, without building protobuf objects: request_id, the
 * InvokeMethod's service_id, method_id, drop_reply and where its args_proto lies in the frame
 * buffer. {@link #read} accepts only the plain shape a client sends (those fields, each at most
 * once, nothing else); any other frame, malformed ones included, reads as "not a plain
 * InvokeMethod" and goes to the full decoder, which keeps the one place that judges bad input.
 */
public final class RawInvoke {
  private final ProtoCursor frame = new ProtoCursor();
  private final ProtoCursor invoke = new ProtoCursor();
  private long requestId;
  private int serviceId;
  private int methodId;
  private long argsOffset;
  private int argsLength;
  private boolean dropReply;

  /** Reads the frame payload at [offset, offset + length) of seg; false unless a plain InvokeMethod. */
  public boolean read(MemorySegment seg, long offset, int length) {
    frame.reset(seg, offset, length);
    requestId = 0;
    boolean sawRequestId = false;
    boolean sawInvoke = false;
    while (frame.hasMore()) {
      int tag = frame.readTag();
      if (tag == IpcFrameTags.REQUEST_ID && !sawRequestId) {
        requestId = frame.readVarint();
        sawRequestId = true;
      } else if (tag == IpcFrameTags.INVOKE_METHOD && !sawInvoke) {
        long n = frame.readLength();
        if (n < 0 || !readInvoke(seg, frame.position(), n)) {
          return false;
        }
        frame.skipBytes(n);
        sawInvoke = true;
      } else {
        return false;
      }
    }
    return sawInvoke && !frame.failed();
  }

  private boolean readInvoke(MemorySegment seg, long offset, long length) {
    invoke.reset(seg, offset, length);
    serviceId = 0;
    methodId = 0;
    argsOffset = offset;
    argsLength = 0;
    dropReply = false;
    int seen = 0; // a bit per field read: each may come once
    while (invoke.hasMore()) {
      int tag = invoke.readTag();
      if (tag == IpcFrameTags.SERVICE_ID && (seen & 1) == 0) {
        seen |= 1;
        serviceId = varint32(invoke.readVarint());
      } else if (tag == IpcFrameTags.METHOD_ID && (seen & 2) == 0) {
        seen |= 2;
        methodId = varint32(invoke.readVarint());
      } else if (tag == IpcFrameTags.ARGS_PROTO && (seen & 4) == 0) {
        seen |= 4;
        long n = invoke.readLength();
        argsOffset = invoke.position();
        argsLength = (int) n;
        invoke.skipBytes(n);
      } else if (tag == IpcFrameTags.DROP_REPLY && (seen & 8) == 0) {
        seen |= 8;
        dropReply = invoke.readVarint() != 0;
      } else {
        return false;
      }
      if (serviceId < 0 || methodId < 0) {
        return false;
      }
    }
    return !invoke.failed();
  }

  /** A uint32 field's value, or -1 when it does not fit (the full decoder then judges it). */
  private static int varint32(long v) {
    return v >>> 31 == 0 ? (int) v : -1;
  }

  public long requestId() {
    return requestId;
  }

  public int serviceId() {
    return serviceId;
  }

  public int methodId() {
    return methodId;
  }

  /** Where args_proto starts in the segment given to {@link #read}. */
  public long argsOffset() {
    return argsOffset;
  }

  public int argsLength() {
    return argsLength;
  }

  public boolean dropReply() {
    return dropReply;
  }
}
