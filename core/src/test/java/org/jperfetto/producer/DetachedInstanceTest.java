package org.jperfetto.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jperfetto.producer.track.Category;
import org.jperfetto.producer.track.TrackEvent;
import org.jperfetto.protos.DataSourceConfig;
import org.junit.jupiter.api.Test;

class DetachedInstanceTest {
  private static long detachedSmbMappings() throws IOException {
    return Files.readAllLines(Path.of("/proc/self/maps")).stream()
        .filter(l -> l.contains("memfd:jperfetto-detached-smb")).count();
  }

  @Test
  void writesIntoASharedMemfdMappingAsARealSessionDoesAndFreesEveryCommittedChunk() throws IOException {
    Category category = Category.of("detached.test");
    TrackEvent te = TrackEvent.builder().categories(category).processName("detached-test").build();
    try (DetachedInstance instance = DetachedInstance.start(te.dataSource(),
        DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0).build())) {
      assertTrue(detachedSmbMappings() >= 1, "the SMB is a mapped memfd, like a service's SMB in a producer");
      for (int i = 0; i < 20_000; i++) { // several times the 256 KiB SMB
        te.begin(category, "slice", "i", i);
        te.end(category);
      }
      te.flush();
      assertTrue(instance.chunksFreed() > 64, "chunks went round the SMB: " + instance.chunksFreed());
    }
  }

  @Test
  void aPausedDrainFillsTheSmbAndWritersDropUntilItResumes() {
    Category category = Category.of("detached.paused");
    TrackEvent te = TrackEvent.builder().categories(category).processName("detached-paused").build();
    try (DetachedInstance instance = DetachedInstance.start(te.dataSource(),
        DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).setTargetBuffer(0).build(), 32 * 1024)) {
      instance.pauseDrain();
      for (int i = 0; i < 20_000; i++) { // far more than 8 pages hold: the writer drops (DROP policy)
        te.begin(category, "slice", "i", i);
        te.end(category);
      }
      assertEquals(0, instance.chunksFreed(), "nothing is freed while the drain is paused");
      instance.resumeDrain();
      long freedAtResume = instance.chunksFreed();
      assertTrue(freedAtResume >= 7, "the chunks committed meanwhile are freed at resume: " + freedAtResume);
      for (int i = 0; i < 20_000; i++) {
        te.begin(category, "slice", "i", i);
        te.end(category);
      }
      te.flush();
      assertTrue(instance.chunksFreed() > freedAtResume + 8,
          "the writer left drop mode and chunks go round again: " + instance.chunksFreed());
    }
  }

  @Test
  void refusesAnSmbThatIsNotWholePages() {
    TrackEvent te = TrackEvent.builder().categories(Category.of("detached.size")).processName("size").build();
    DataSourceConfig config = DataSourceConfig.newBuilder().setName(TrackEvent.DATA_SOURCE_NAME).build();
    assertThrows(IllegalArgumentException.class, () -> DetachedInstance.start(te.dataSource(), config, 5000));
    assertThrows(IllegalArgumentException.class, () -> DetachedInstance.start(te.dataSource(), config, 0));
  }
}
