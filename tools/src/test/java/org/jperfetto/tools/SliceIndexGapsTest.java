package org.jperfetto.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class SliceIndexGapsTest {
  @Test
  void reportsRunsOfMissingIndicesAndWhereInTheRangeTheyFell() {
    SliceIndexGaps gaps = new SliceIndexGaps();
    for (int i = 0; i < 100; i++) {
      if (!(i >= 10 && i < 13) && i != 50 && !(i >= 94 && i < 100)) {
        gaps.add(i);
      }
    }
    gaps.add(7); // a repeat changes nothing
    SliceIndexGaps.Report r = gaps.report(100);
    assertEquals(100, r.indices());
    assertEquals(3 + 1 + 6, r.missing());
    assertEquals(3, r.gaps());
    assertEquals(6, r.largestGap());
    assertEquals(10, r.firstGapStart());
    int[] expected = new int[SliceIndexGaps.PARTS];
    expected[2] = 3; // 10, 11, 12 in [10, 15)
    expected[10] = 1; // 50
    expected[18] = 1; // 94 in [90, 95)
    expected[19] = 5; // 95..99
    assertArrayEquals(expected, r.lostPerPart());
    assertEquals("indexed_slices=100 missing_indices=10 gaps=3 largest_gap=6 first_gap_at=10"
        + " missing_per_twentieth=0,0,3,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,1,5", r.fields());
  }

  @Test
  void withoutAnExpectedCountTheRangeEndsAtTheLargestIndexSeen() {
    SliceIndexGaps gaps = new SliceIndexGaps();
    gaps.add(0);
    gaps.add(3);
    gaps.add(-1);
    gaps.add(SliceIndexGaps.MAX_INDEX);
    SliceIndexGaps.Report r = gaps.report(0);
    assertEquals(4, r.indices());
    assertEquals(2, r.missing());
    assertEquals(1, r.gaps());
    assertEquals(2, r.ignored());
  }

  @Test
  void nothingMissingAndNothingSeen() {
    SliceIndexGaps all = new SliceIndexGaps();
    for (int i = 0; i < 7; i++) {
      all.add(i);
    }
    assertEquals("indexed_slices=7 missing_indices=0 gaps=0 largest_gap=0 first_gap_at=-1"
        + " missing_per_twentieth=0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", all.report(7).fields());
    SliceIndexGaps.Report none = new SliceIndexGaps().report(0);
    assertEquals(0, none.indices());
    assertEquals(0, none.gaps());
  }

  /** Against a plain scan: the counts agree and the parts add up, for any pattern and range. */
  @Property(tries = 200)
  void agreesWithAPlainScan(@ForAll @IntRange(min = 1, max = 3000) int n, @ForAll long seed,
      @ForAll @IntRange(min = 0, max = 100) int keepPercent) {
    Random random = new Random(seed);
    boolean[] kept = new boolean[n];
    SliceIndexGaps gaps = new SliceIndexGaps();
    for (int i = 0; i < n; i++) {
      kept[i] = random.nextInt(100) < keepPercent;
      if (kept[i]) {
        gaps.add(i);
      }
    }
    SliceIndexGaps.Report r = gaps.report(n);
    int missing = 0;
    int runs = 0;
    int longest = 0;
    int run = 0;
    int[] perPart = new int[SliceIndexGaps.PARTS];
    for (int i = 0; i < n; i++) {
      if (!kept[i]) {
        missing++;
        perPart[(int) ((long) i * SliceIndexGaps.PARTS / n)]++;
        if (run++ == 0) {
          runs++;
        }
        longest = Math.max(longest, run);
      } else {
        run = 0;
      }
    }
    assertEquals(missing, r.missing());
    assertEquals(runs, r.gaps());
    assertEquals(longest, r.largestGap());
    assertArrayEquals(perPart, r.lostPerPart());
  }
}
