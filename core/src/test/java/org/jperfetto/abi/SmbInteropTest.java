package org.jperfetto.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.jperfetto.testing.Fixtures;

/**
 * Replays the SMBs that upstream's C++ TraceWriter filled (test-fixtures/interop/smb, see its README):
 * our reader must find exactly the chunks, fragments and packets listed there.
 */
class SmbInteropTest {
  private static final int PAGE_SIZE = 4096;

  /** Expected facts per capture (README of test-fixtures/interop/smb). */
  record Capture(String file, int firstChunkId, int lastChunkId, int firstPageOfOldest, int fragments,
      int oneByteSizes, int fourByteSizes, int needsPatchingChunks, int gluedPackets, int unpatchedGlued,
      int packets, int iCount, long iMin, long iMax) {}

  static List<Arguments> captures() {
    return List.of(
        Arguments.of(new Capture("smb_v58_full.bin",
            61, 124, 61, 16610, 16520, 90, 36, 44, 36, 16564, 7847, 7557, 15434)),
        Arguments.of(new Capture("smb_v14_full.bin",
            307, 370, 51, 9388, 0, 9388, 22, 42, 22, 9344, 4429, 21662, 26110)));
  }

  @ParameterizedTest
  @MethodSource("captures")
  void readerDecodesUpstreamWriterSmb(Capture cap) throws IOException {
    Path file = Fixtures.interop("smb", cap.file());
    byte[] bytes = Files.readAllBytes(file);
    assertEquals(256 * 1024, bytes.length);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment smb = arena.allocate(bytes.length, SharedMemoryAbi.MIN_PAGE_SIZE);
      MemorySegment.copy(bytes, 0, smb, ValueLayout.JAVA_BYTE, 0, bytes.length);
      SharedMemoryAbi abi = new SharedMemoryAbi(smb, PAGE_SIZE);
      UntrustedChunkReader reader = new UntrustedChunkReader(abi);
      assertEquals(64, abi.numPages());

      List<SmbDecoder.ChunkCopy> copies = new ArrayList<>();
      int countSum = 0;
      for (int page = 0; page < abi.numPages(); page++) {
        assertEquals(0x10000003, abi.headerBitmap(page), "page " + page);
        assertEquals(PageLayout.DIV1, abi.pageLayout(page));
        assertTrue(abi.isPageComplete(page));
        assertEquals(ChunkReadResult.OK, reader.scrape(page, abi.headerBitmap(page), 0), "scrape page " + page);
        int scrapedUsed = reader.usedSize();
        assertEquals(ChunkReadResult.OK, reader.acquireCommitted(page, 0), "page " + page);
        assertEquals(scrapedUsed, reader.usedSize(), "a COMPLETE chunk scrapes like it commits");
        assertEquals(1, reader.writerId());
        assertTrue(reader.complete());
        assertFalse(reader.fragmentsMalformed(), "page " + page);
        int expectedId = page < cap.firstPageOfOldest()
            ? cap.firstChunkId() + (abi.numPages() - cap.firstPageOfOldest()) + page
            : cap.firstChunkId() + page - cap.firstPageOfOldest();
        assertEquals(expectedId, reader.chunkId(), "chunk id at page " + page);
        assertEquals(reader.chunkId() == cap.lastChunkId(), reader.writerDataDrop(), "drop marker only in newest");
        assertEquals(4088 - 8, reader.payloadSize());
        assertTrue(reader.usedSize() <= reader.payloadSize());
        countSum += reader.packetCount();
        copies.add(SmbDecoder.ChunkCopy.of(reader, smb));
        assertEquals(ChunkReadResult.OK, reader.releaseAsFree());
        assertTrue(abi.isPageFree(page), "Div1 page returns to NOT_PARTITIONED once its chunk is free");
      }
      assertEquals(cap.fragments(), countSum, "sum of packets.count");
      assertEquals(2, reader.writerDataDrops(), "the newest chunk, seen by the scrape and by the commit");
      assertEquals(0, reader.fragmentViolations());

      SmbDecoder decoder = new SmbDecoder();
      List<SmbDecoder.Packet> packets = decoder.decode(copies);
      SmbDecoder.Stats s = decoder.stats;
      assertEquals(cap.fragments(), s.fragments, "fragments incl. the drop marker");
      assertEquals(cap.oneByteSizes(), s.oneByteSizes, "1-byte sizes");
      assertEquals(cap.fourByteSizes(), s.fourByteSizes, "4-byte sizes");
      assertEquals(0, s.otherSizes);
      assertEquals(List.of(cap.lastChunkId()), s.dropMarkerChunks);
      assertEquals(cap.needsPatchingChunks(), s.needsPatchingChunks);
      assertEquals(0, s.malformedChunks);
      assertEquals(cap.packets(), packets.size(), "whole packets");
      assertEquals(cap.gluedPackets(), s.gluedPackets);
      assertEquals(cap.unpatchedGlued(), packets.stream().filter(SmbDecoder.Packet::patchPending).count());

      // A packet decodes as a TracePacket exactly when no patch is pending in it.
      List<Long> iValues = new ArrayList<>();
      for (SmbDecoder.Packet p : packets) {
        Long i;
        try {
          i = sliceBeginI(p.data());
        } catch (InvalidProtocolBufferException e) {
          assertTrue(p.patchPending(), "only patch-pending packets may fail to decode: chunk " + p.firstChunkId());
          continue;
        }
        assertFalse(p.patchPending(), "a patch-pending packet decoded: chunk " + p.firstChunkId());
        if (i != null) {
          iValues.add(i);
        }
      }
      assertEquals(cap.iCount(), iValues.size());
      assertEquals(cap.iMin(), iValues.getFirst());
      assertEquals(cap.iMax(), iValues.getLast());
      int twoSteps = 0;
      for (int k = 1; k < iValues.size(); k++) {
        long step = iValues.get(k) - iValues.get(k - 1);
        assertTrue(step == 1 || step == 2, "i steps by 1, or 2 over an unpatched packet: " + iValues.get(k));
        twoSteps += step == 2 ? 1 : 0;
      }
      assertEquals(cap.iMax() - cap.iMin() + 1 - cap.iCount(), twoSteps);
    }
  }

  /**
   * The debug annotation value of a TracePacket holding a slice-begin TrackEvent, or null for other
   * packets. TracePacket.track_event = 11; TrackEvent.type = 9 (1 = SLICE_BEGIN),
   * debug_annotations = 4; DebugAnnotation.int_value = 4.
   */
  private static Long sliceBeginI(byte[] packet) throws InvalidProtocolBufferException {
    UnknownFieldSet tp = UnknownFieldSet.parseFrom(packet);
    if (!tp.hasField(11)) {
      return null;
    }
    UnknownFieldSet te = UnknownFieldSet.parseFrom(tp.getField(11).getLengthDelimitedList().getFirst());
    if (!te.hasField(9) || te.getField(9).getVarintList().getFirst() != 1) {
      return null;
    }
    for (var da : te.getField(4).getLengthDelimitedList()) {
      UnknownFieldSet a = UnknownFieldSet.parseFrom(da);
      if (a.hasField(4)) {
        return a.getField(4).getVarintList().getFirst();
      }
    }
    return null;
  }
}
