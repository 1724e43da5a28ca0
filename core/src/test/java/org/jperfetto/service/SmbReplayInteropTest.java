package org.jperfetto.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jperfetto.abi.ChunkHeader;
import org.jperfetto.abi.ChunkState;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;
import org.jperfetto.protos.Trace;
import org.jperfetto.protos.TraceConfig;
import org.jperfetto.protos.TracePacket;
import org.jperfetto.protos.TraceStats;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.jperfetto.testing.Fixtures;

/**
 * Replays SMBs written by upstream's C++ TraceWriter (test-fixtures/interop/smb) into the service:
 * the SMB is adopted as the producer's own, every Complete chunk is committed in chunk-id order,
 * and the trace read back is checked against an independent walk over the chunk headers.
 */
@Timeout(30)
class SmbReplayInteropTest {
  private static final int PAGE = 4096;

  @ParameterizedTest
  // wholePackets: the README figure less the empty (size 0) packets, which are not handed out
  // (19 in v58, none in v14).
  // readableUnpatched: whole packets before the first chunk that needs patching.
  @CsvSource({"smb_v58_full.bin, 61, 124, 16610, 16545, 0",
      "smb_v14_full.bin, 307, 370, 9388, 9344, 291"})
  void upstreamSmbReplaysThroughCommitData(String file, int firstId, int lastId, int fragments,
      int wholePackets, int readableUnpatched)
      throws IOException {
    byte[] bytes = Files.readAllBytes(Fixtures.interop("smb", file));
    SharedMemory smb = SharedMemory.arenaFactory().create(bytes.length);
    MemorySegment.copy(bytes, 0, smb.segment(), ValueLayout.JAVA_BYTE, 0, bytes.length);

    ManualTaskRunner runner = new ManualTaskRunner();
    TracingService service = new TracingService(runner, SharedMemory.arenaFactory());
    TestConsumer consumer = new TestConsumer().connect(service, 1000);
    TestProducer producer = new TestProducer();
    producer.endpoint = service.connectProducer(producer, new ClientIdentity(1001, 55), "sdk_app",
        bytes.length, PAGE, Optional.of(smb), "v58");
    assertTrue(producer.endpoint.usingProducerProvidedSmb());
    producer.endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName("track_event").build());
    assertEquals("", consumer.enable(TraceConfig.newBuilder()
        .addBuffers(TraceConfig.BufferConfig.newBuilder().setSizeKb(4096)
            .setFillPolicy(TraceConfig.BufferConfig.FillPolicy.DISCARD))
        .addDataSources(TraceConfig.DataSource.newBuilder()
            .setConfig(DataSourceConfig.newBuilder().setName("track_event")))
        .build()));
    int buffer = producer.targetBuffer();
    producer.endpoint.registerTraceWriter(1, buffer);

    // Chunks by id, from the SMB's headers (before the service frees them).
    SharedMemoryAbi abi = new SharedMemoryAbi(smb.segment(), PAGE);
    List<int[]> chunks = new ArrayList<>(); // {chunkId, page, count, flags}
    int totalFragments = 0;
    for (int page = 0; page < abi.numPages(); page++) {
      assertEquals(ChunkState.COMPLETE, abi.chunkState(page, 0));
      long off = (long) page * PAGE + 8;
      int id = smb.segment().get(ValueLayout.JAVA_INT_UNALIGNED, off);
      short packets = smb.segment().get(ValueLayout.JAVA_SHORT_UNALIGNED, off + 6);
      chunks.add(new int[] {id, page, ChunkHeader.packetCount(packets), ChunkHeader.packetFlags(packets)});
      totalFragments += ChunkHeader.packetCount(packets);
    }
    chunks.sort((a, b) -> Integer.compareUnsigned(a[0], b[0]));
    assertEquals(firstId, chunks.get(0)[0]);
    assertEquals(lastId, chunks.get(chunks.size() - 1)[0]);
    assertEquals(fragments, totalFragments);

    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    for (int[] c : chunks) {
      req.addChunksToMove(CommitDataRequest.ChunksToMove.newBuilder().setPage(c[1]).setChunk(0)
          .setTargetBuffer(buffer));
    }
    producer.endpoint.commitData(req.build(), null);
    assertEquals(0, service.producerAbiViolations());

    // Nothing past a chunk still needing patches may come out.
    // ReadBuffers is destructive: these packets count with the rest below.
    Trace unpatched = consumer.readTrace();
    int beforePatching = readableBeforeFirstUnpatchedChunk(chunks);
    assertEquals(readableUnpatched, beforePatching);
    assertEquals(beforePatching, producerPackets(unpatched).size());

    // The real patches went over IPC and are not in the capture: patch each flagged chunk with
    // the bytes it already holds, which releases it as it stands.
    CommitDataRequest.Builder patches = CommitDataRequest.newBuilder();
    for (int[] c : chunks) {
      if ((c[3] & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0) {
        byte[] same = new byte[4];
        System.arraycopy(bytes, c[1] * PAGE + 16, same, 0, 4);
        patches.addChunksToPatch(CommitDataRequest.ChunkToPatch.newBuilder().setTargetBuffer(buffer)
            .setWriterId(1).setChunkId(c[0]).addPatches(CommitDataRequest.ChunkToPatch.Patch.newBuilder()
                .setOffset(0).setData(com.google.protobuf.ByteString.copyFrom(same))));
      }
    }
    producer.endpoint.commitData(patches.build(), null);
    for (int page = 0; page < abi.numPages(); page++) {
      assertTrue(abi.isPageFree(page), "chunk released: page " + page);
    }

    consumer.endpoint.disableTracing();
    consumer.endpoint.readBuffers();
    // Unpatched nested sizes make a few glued packets undecodable (README: 26 in v58, 2 in v14):
    // decode packet by packet; the validator drops those broken at the top level.
    int decoded = 0;
    int undecodable = 0;
    TraceStats stats = null;
    for (byte[] raw : consumer.packets()) {
      try {
        TracePacket p = TracePacket.parseFrom(raw);
        if (p.hasTraceStats()) {
          stats = p.getTraceStats();
        }
        if (p.getTrustedPacketSequenceId() > ServiceLimits.SERVICE_SEQUENCE_ID) {
          decoded++;
          assertEquals(1001, p.getTrustedUid());
          assertEquals(55, p.getTrustedPid());
        }
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        undecodable++;
      }
    }
    assertNotNull(stats);
    assertTrue(decoded > wholePackets * 95L / 100, "decoded=" + decoded);
    long out = decoded + undecodable + stats.getInvalidPackets();
    assertEquals(wholePackets, out, "decoded=" + decoded + " undecodable=" + undecodable
        + " invalid=" + stats.getInvalidPackets() + " before patching=" + beforePatching);
    assertEquals(64, stats.getBufferStats(0).getChunksWritten());
    assertEquals(0, stats.getBufferStats(0).getAbiViolations());
    assertEquals(1, stats.getBufferStats(0).getTraceWriterPacketLoss(), "the drop marker");
  }

  private static List<TracePacket> producerPackets(Trace t) {
    return t.getPacketList().stream()
        .filter(p -> p.getTrustedPacketSequenceId() > ServiceLimits.SERVICE_SEQUENCE_ID).toList();
  }

  /**
   * Whole packets in chunk-id order up to the first chunk still flagged needs-patching (the
   * sequence must stop there: the service cannot hand out unpatched data). The first chunk's
   * leading continuation has lost its beginning and does not count.
   */
  private static int readableBeforeFirstUnpatchedChunk(List<int[]> chunks) {
    int whole = 0;
    boolean open = false;
    for (int[] c : chunks) {
      int count = c[2];
      int flags = c[3];
      if ((flags & ChunkHeader.CHUNK_NEEDS_PATCHING) != 0) {
        break;
      }
      for (int f = 0; f < count; f++) {
        boolean first = f == 0 && (flags & ChunkHeader.FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK) != 0;
        boolean last = f == count - 1 && (flags & ChunkHeader.LAST_PACKET_CONTINUES_ON_NEXT_CHUNK) != 0;
        if (first && !open) {
          continue; // its head is not here
        }
        if (last) {
          open = true;
          continue;
        }
        whole++;
        open = false;
      }
    }
    return whole;
  }
}
