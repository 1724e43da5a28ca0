package org.jperfetto.ipc.wire;

import static org.jperfetto.wire.ProtoWire.WIRE_TYPE_LENGTH_DELIMITED;
import static org.jperfetto.wire.ProtoWire.WIRE_TYPE_VARINT;
import static org.jperfetto.wire.ProtoWire.makeTag;

import org.jperfetto.protos.IPCFrame.InvokeMethod;
import org.jperfetto.protos.IPCFrame;

/**
 * The IPCFrame tags that jperfetto writes and reads by hand, from the generated field numbers: the
 * client's InvokeMethod frames (OutboundBuffer writes them, {@link RawInvoke} reads them in place)
 * and the request_id that leads every frame. One list for both sides, so they cannot disagree.
 */
public final class IpcFrameTags {
  private IpcFrameTags() {}

  public static final int REQUEST_ID = makeTag(IPCFrame.REQUEST_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int INVOKE_METHOD = makeTag(IPCFrame.MSG_INVOKE_METHOD_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);

  public static final int SERVICE_ID = makeTag(InvokeMethod.SERVICE_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int METHOD_ID = makeTag(InvokeMethod.METHOD_ID_FIELD_NUMBER, WIRE_TYPE_VARINT);
  public static final int ARGS_PROTO = makeTag(InvokeMethod.ARGS_PROTO_FIELD_NUMBER, WIRE_TYPE_LENGTH_DELIMITED);
  public static final int DROP_REPLY = makeTag(InvokeMethod.DROP_REPLY_FIELD_NUMBER, WIRE_TYPE_VARINT);
}
