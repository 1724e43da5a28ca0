package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The trusted fields the service appends to every producer packet, against protobuf-java. */
class SliceBatchTest {
  static byte[] expected(int uid, int pid, int machine, int seq, boolean dropped) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream o = CodedOutputStream.newInstance(bytes);
    o.writeInt32(3, uid);
    o.writeUInt32(10, seq);
    if (pid != 0) {
      o.writeInt32(79, pid);
    }
    if (machine != 0) {
      o.writeUInt32(98, machine);
    }
    if (dropped) {
      o.writeUInt32(42, 1);
    }
    o.flush();
    return bytes.toByteArray();
  }

  @Test
  void trustedFieldsEncodeAsProtobufDoes() throws Exception {
    int[] edge = {0, 1, 127, 128, 16383, 16384, Integer.MAX_VALUE, -1, Integer.MIN_VALUE};
    for (int uid : edge) {
      for (int pid : edge) {
        for (int seq : edge) {
          for (boolean dropped : new boolean[] {false, true}) {
            for (int machine : new int[] {0, 1, 0x7f, 0x80, -1}) {
              assertArrayEquals(expected(uid, pid, machine, seq, dropped),
                  SliceBatch.trustedFields(uid, pid, machine, seq, dropped),
                  "uid=" + uid + " pid=" + pid + " machine=" + machine + " seq=" + seq + " dropped=" + dropped);
            }
          }
        }
      }
    }
    Random rnd = new Random(3);
    for (int i = 0; i < 10_000; i++) {
      int uid = rnd.nextInt();
      int pid = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt();
      int seq = rnd.nextInt();
      boolean dropped = rnd.nextBoolean();
      int machine = rnd.nextBoolean() ? 0 : rnd.nextInt();
      assertArrayEquals(expected(uid, pid, machine, seq, dropped),
          SliceBatch.trustedFields(uid, pid, machine, seq, dropped));
    }
  }
}
