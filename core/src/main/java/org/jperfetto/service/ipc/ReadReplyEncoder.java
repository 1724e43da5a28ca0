package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.util.List;
import java.util.function.Consumer;
import org.jperfetto.protos.ReadBuffersResponse;
import org.jperfetto.wire.ProtoWire;
import org.jperfetto.wire.Varints;

/**
 * Encodes trace slices as ReadBuffersResponse messages of at most a given size, straight into one
 * byte array per reply: the bytes protobuf-java would write for the same slices, without building
 * a response message and serializing it again (read-out moves the whole trace through here).
 */
final class ReadReplyEncoder {
  // ReadBuffersResponse.slices, Slice.data, Slice.last_slice_for_packet.
  private static final int TAG_SLICES =
      ProtoWire.makeTag(ReadBuffersResponse.SLICES_FIELD_NUMBER, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
  private static final int TAG_DATA =
      ProtoWire.makeTag(ReadBuffersResponse.Slice.DATA_FIELD_NUMBER, ProtoWire.WIRE_TYPE_LENGTH_DELIMITED);
  private static final int TAG_LAST =
      ProtoWire.makeTag(ReadBuffersResponse.Slice.LAST_SLICE_FOR_PACKET_FIELD_NUMBER, ProtoWire.WIRE_TYPE_VARINT);

  private ReadReplyEncoder() {}

  /**
   * Hands out the encoded replies in order, each at most maxBytes unless one slice alone is
   * larger; an empty list gives one empty reply.
   */
  static void encode(List<ReadBuffersResponse.Slice> slices, int maxBytes, Consumer<ByteString> out) {
    int from = 0;
    do {
      int size = 0;
      int to = from;
      while (to < slices.size()) {
        int one = ProtoWire.taggedLengthDelimitedSize(TAG_SLICES, sliceSize(slices.get(to)));
        if (size + one > maxBytes && to > from) {
          break;
        }
        size += one;
        to++;
      }
      byte[] reply = new byte[size];
      int at = 0;
      for (int i = from; i < to; i++) {
        ReadBuffersResponse.Slice slice = slices.get(i);
        at = Varints.put(reply, Varints.put(reply, at, TAG_SLICES), sliceSize(slice));
        if (slice.hasData()) {
          ByteString data = slice.getData();
          at = Varints.put(reply, Varints.put(reply, at, TAG_DATA), data.size());
          data.copyTo(reply, at);
          at += data.size();
        }
        if (slice.hasLastSliceForPacket()) {
          at = Varints.put(reply, Varints.put(reply, at, TAG_LAST), slice.getLastSliceForPacket() ? 1 : 0);
        }
      }
      out.accept(UnsafeByteOperations.unsafeWrap(reply)); // never written again
      from = to;
    } while (from < slices.size());
  }

  private static int sliceSize(ReadBuffersResponse.Slice slice) {
    int n = 0;
    if (slice.hasData()) {
      n += ProtoWire.taggedLengthDelimitedSize(TAG_DATA, slice.getData().size());
    }
    if (slice.hasLastSliceForPacket()) {
      n += ProtoWire.taggedVarIntSize(TAG_LAST, 1); // a bool
    }
    return n;
  }
}
