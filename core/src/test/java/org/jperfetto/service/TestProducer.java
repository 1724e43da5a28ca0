package org.jperfetto.service;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jperfetto.abi.PageLayout;
import org.jperfetto.abi.SharedMemoryAbi;
import org.jperfetto.protos.CommitDataRequest;
import org.jperfetto.protos.DataSourceConfig;
import org.jperfetto.protos.DataSourceDescriptor;

/** An in-process producer: records the service's commands and writes through TestTraceWriters. */
final class TestProducer implements ProducerCallbacks {
  final List<Long> setups = new ArrayList<>();
  final List<DataSourceConfig> starts = new ArrayList<>();
  final List<Long> stops = new ArrayList<>();
  final List<Long> flushes = new ArrayList<>();
  final List<String> kicked = new ArrayList<>();
  final List<long[]> clears = new ArrayList<>();
  boolean ackFlushes = true;
  SharedMemory smb;
  int pageSizeKb;
  SharedMemoryAbi abi;
  ProducerEndpoint endpoint;
  final List<TestTraceWriter> writers = new ArrayList<>();

  TestProducer connect(TracingService service, String name, int uid, int pid) {
    endpoint = service.connectProducer(this, new ClientIdentity(uid, pid), name, 0, 0,
        Optional.empty(), "test");
    return this;
  }

  TestProducer register(String dataSource) {
    String err = endpoint.registerDataSource(DataSourceDescriptor.newBuilder().setName(dataSource).build());
    if (!err.isEmpty()) {
      throw new AssertionError(err);
    }
    return this;
  }

  /** The service-wide buffer of the last started data source. */
  int targetBuffer() {
    return starts.get(starts.size() - 1).getTargetBuffer();
  }

  TestTraceWriter writer(int writerId, PageLayout layout) {
    TestTraceWriter w = new TestTraceWriter(abi, writerId, targetBuffer(), layout);
    endpoint.registerTraceWriter(writerId, targetBuffer());
    writers.add(w);
    return w;
  }

  /** Completes every writer's chunk and commits all pending chunks and patches. */
  void commitAll(long flushRequestId) {
    CommitDataRequest.Builder req = CommitDataRequest.newBuilder();
    for (TestTraceWriter w : writers) {
      w.finishChunk();
      w.drainInto(req, true);
    }
    if (flushRequestId != 0) {
      req.setFlushRequestId(flushRequestId);
    }
    endpoint.commitData(req.build(), null);
  }

  @Override
  public void setupTracing(SharedMemory memory, int pageSizeKb) {
    this.smb = memory;
    this.pageSizeKb = pageSizeKb;
    this.abi = new SharedMemoryAbi(memory.segment(), pageSizeKb * 1024);
  }

  @Override
  public void setupDataSource(long instanceId, DataSourceConfig config) {
    setups.add(instanceId);
  }

  @Override
  public void startDataSource(long instanceId, DataSourceConfig config) {
    starts.add(config);
  }

  @Override
  public void stopDataSource(long instanceId) {
    stops.add(instanceId);
  }

  @Override
  public void flush(long requestId, long[] ids, long flags) {
    flushes.add(requestId);
    if (ackFlushes) {
      commitAll(requestId);
    }
  }

  @Override
  public void clearIncrementalState(long[] ids) {
    clears.add(ids);
  }

  @Override
  public void onDisconnectedByService(String reason) {
    kicked.add(reason);
  }
}
