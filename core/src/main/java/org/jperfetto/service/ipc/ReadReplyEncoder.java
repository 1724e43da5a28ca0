package org.jperfetto.service.ipc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.util.List;
import java.util.function.Consumer;
import org.jperfetto.abi.Varints;
import org.jperfetto.ipc.wire.ProtoCursor;
import org.jperfetto.protos.ReadBuffersResponse;

/**
 * Encodes trace slices as ReadBuffersResponse messages of at most a given size, straight into one
 * byte array per reply: the bytes protobuf-java would write for the same slices, without building
 * a response message and serializing it again (read-out moves the whole trace through here).
 */
final class ReadReplyEncoder {
  // ReadBuffersResponse.slices, Slice.data, Slice.last_slice_for_packet: field number << 3 | wire type.
  private static final int TAG_SLICES = ReadBuffersResponse.SLICES_FIELD_NUMBER << 3 | ProtoCursor.LEN;
  private static final int TAG_DATA = ReadBuffersResponse.Slice.DATA_FIELD_NUMBER << 3 | ProtoCursor.LEN;
  private static final int TAG_LAST =
      ReadBuffersResponse.Slice.LAST_SLICE_FOR_PACKET_FIELD_NUMBER << 3 | ProtoCursor.VARINT;

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
        int one = fieldSize(sliceSize(slices.get(to)));
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
        reply[at++] = (byte) TAG_SLICES;
        at = Varints.put(reply, at, sliceSize(slice));
        if (slice.hasData()) {
          ByteString data = slice.getData();
          reply[at++] = (byte) TAG_DATA;
          at = Varints.put(reply, at, data.size());
          data.copyTo(reply, at);
          at += data.size();
        }
        if (slice.hasLastSliceForPacket()) {
          reply[at++] = (byte) TAG_LAST;
          reply[at++] = (byte) (slice.getLastSliceForPacket() ? 1 : 0);
        }
      }
      out.accept(UnsafeByteOperations.unsafeWrap(reply)); // never written again
      from = to;
    } while (from < slices.size());
  }

  private static int sliceSize(ReadBuffersResponse.Slice slice) {
    int n = 0;
    if (slice.hasData()) {
      n += fieldSize(slice.getData().size());
    }
    if (slice.hasLastSliceForPacket()) {
      n += 2;
    }
    return n;
  }

  /** A length-delimited field of a one-byte tag: tag, length varint, payload. */
  private static int fieldSize(int payload) {
    return 1 + Varints.size(payload) + payload;
  }


}
