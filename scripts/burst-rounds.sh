#!/usr/bin/env bash
# Issue 13's side-by-side comparison in interleaved rounds: each round runs the reference burst four
# times, each into a freshly started service (scripts/burst-bench.sh -r 1): traced <- C++ SDK,
# traced <- Java, jtraced <- C++ SDK, jtraced <- Java. One line per round, then how often each of
# the issue's per-run targets held. Interleaving matters on a shared machine: its speed drifts by
# more than the differences being measured, so only runs next to each other compare.
#
#   scripts/burst-rounds.sh [-c] [-r ROUNDS] [-n N] [-k SMB_KB]
#   scripts/burst-rounds.sh -b BASE_BIN [-p java|cpp] [-r ROUNDS] [-n N] [-k SMB_KB]
#   scripts/burst-rounds.sh --summarize FILE    # the summary of round lines saved from a run
#
#   -r   rounds (default 5); -n slices per burst (default 1000000); -k the SMB size hint in KiB
#        (default 0: the service's default, 256 KiB)
#   -c   control rounds: the C++ burst only, into traced, jtraced, traced again and jtraced again
#        (cells traced-cpp, jtraced-cpp, traced-cpp2, jtraced-cpp2). How often a service keeps at
#        least what another run of the same service kept in the same round is the noise floor of
#        the per-run comparison with traced: a service at parity with traced can meet that
#        comparison only as often as traced meets it against itself.
#   -b   two jtraced builds instead of jtraced and traced, no upstream service needed: each round a
#        burst from producer -p (default java; the producer and consumer always from JPERFETTO_BIN)
#        into a fresh jtraced of BASE_BIN (cell base-P), then into one of JTRACED_BIN (cell jtraced-P);
#        the summary gives each cell's mean kept, ingest and read-out CPU
#   Needs what burst-bench.sh needs for both services and producers: UPSTREAM_OUT (traced, perfetto)
#   and REF_APP (the C++ side of the workload); JPERFETTO_BIN / JTRACED_BIN pick other builds.
#
# A round line: "round R" (or "control R") then, per cell, its name (traced-cpp, traced-java, jtraced-cpp,
# jtraced-java) and five numbers: the producer's M slices/s, % kept, the service's ingest CPU s,
# read-out CPU s, and % readable (kept in packets trace_processor reads; lines saved before it was
# added have four numbers a cell, and their summary leaves it out).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

summarize() {
  awk '
    $1 == "round" {
      n++
      for (i = 3; i + 4 <= NF; i++) {
        if ($i !~ /^j?traced-(cpp|java)$/) continue
        c = $i; rate[c, n] = $(i + 1); kept[c, n] = $(i + 2); ingest[c, n] = $(i + 3); readout[c, n] = $(i + 4)
        if (i + 5 <= NF && $(i + 5) ~ /^[0-9.]+$/) { readable[c, n] = $(i + 5); hasReadable[n] = 1 }
      }
    }
    function range(a, c,   k, lo, hi) {
      lo = hi = a[c, 1]
      for (k = 2; k <= n; k++) { if (a[c, k] < lo) lo = a[c, k]; if (a[c, k] > hi) hi = a[c, k] }
      return lo "-" hi
    }
    function ratios(s,   k, out, r, ok) {
      out = ""; ok = 0
      for (k = 1; k <= n; k++) {
        r = rate[s "-cpp", k] > 0 ? rate[s "-java", k] / rate[s "-cpp", k] : 0
        out = out sprintf(" %.2f", r); if (r >= 0.8) ok++
      }
      return sprintf("%s (>= 0.8 in %d of %d)", out, ok, n)
    }
    function atMost(a, x, y,   k, ok) {
      ok = 0
      for (k = 1; k <= n; k++) if (a[x, k] <= a[y, k]) ok++
      return ok
    }
    function atLeast(a, x, y,   k, ok) {
      ok = 0
      for (k = 1; k <= n; k++) if (a[x, k] >= a[y, k]) ok++
      return ok
    }
    END {
      printf "rounds: %d\n", n
      printf "C++ burst kept, jtraced >= traced: %d of %d (jtraced %s %%, traced %s %%)\n",
        atLeast(kept, "jtraced-cpp", "traced-cpp"), n, range(kept, "jtraced-cpp"), range(kept, "traced-cpp")
      printf "Java / C++ slices/s into traced:%s\n", ratios("traced")
      printf "Java / C++ slices/s into jtraced:%s\n", ratios("jtraced")
      printf "Java kept >= C++ kept: into traced %d of %d, into jtraced %d of %d\n",
        atLeast(kept, "traced-java", "traced-cpp"), n, atLeast(kept, "jtraced-java", "jtraced-cpp"), n
      readableRounds = 0
      for (k = 1; k <= n; k++) readableRounds += hasReadable[k]
      if (readableRounds == n) {
        printf "readable (what trace_processor reads) Java >= C++: into traced %d of %d (Java %s %%, C++ %s %%), into jtraced %d of %d (Java %s %%, C++ %s %%)\n",
          atLeast(readable, "traced-java", "traced-cpp"), n, range(readable, "traced-java"), range(readable, "traced-cpp"),
          atLeast(readable, "jtraced-java", "jtraced-cpp"), n, range(readable, "jtraced-java"), range(readable, "jtraced-cpp")
      }
      printf "ingest CPU s of a C++ burst, jtraced <= traced: %d of %d (jtraced %s, traced %s)\n",
        atMost(ingest, "jtraced-cpp", "traced-cpp"), n, range(ingest, "jtraced-cpp"), range(ingest, "traced-cpp")
      printf "read-out CPU s of a C++ burst, jtraced <= traced: %d of %d (jtraced %s, traced %s)\n",
        atMost(readout, "jtraced-cpp", "traced-cpp"), n, range(readout, "jtraced-cpp"), range(readout, "traced-cpp")
    }' "$@"
}

# The control rounds' summary: per comparison, the rounds in which it held and the groups of five
# consecutive rounds (1-5, 6-10, ...) in which it held in every round.
summarize_control() {
  awk '
    $1 == "control" && $2 ~ /^[0-9]+$/ {
      n++
      for (i = 3; i + 4 <= NF; i++) {
        if ($i !~ /^j?traced-cpp2?$/) continue
        kept[$i, n] = $(i + 2)
      }
    }
    function held(x, y, k) { return kept[x, k] >= kept[y, k] }
    function count(x, y,   k, ok, g, groups, all) {
      ok = 0; groups = 0; all = 0
      for (k = 1; k <= n; k++) ok += held(x, y, k)
      for (g = 0; g + 5 <= n; g += 5) {
        groups++; all++
        for (k = g + 1; k <= g + 5; k++) if (!held(x, y, k)) { all--; break }
      }
      return sprintf("%d of %d rounds; in all five of a group of five: %d of %d groups", ok, n, all, groups)
    }
    function stats(c1, c2,   k, sum, lo) {
      sum = 0; lo = kept[c1, 1]
      for (k = 1; k <= n; k++) {
        sum += kept[c1, k] + kept[c2, k]
        if (kept[c1, k] < lo) lo = kept[c1, k]
        if (kept[c2, k] < lo) lo = kept[c2, k]
      }
      return sprintf("mean %.2f %%, worst run %s %%", sum / (2 * n), lo)
    }
    END {
      printf "control rounds: %d (C++ burst kept)\n", n
      printf "traced >= traced earlier in the round: %s\n", count("traced-cpp2", "traced-cpp")
      printf "jtraced >= jtraced earlier in the round: %s\n", count("jtraced-cpp2", "jtraced-cpp")
      printf "jtraced >= traced, first pair of the round: %s\n", count("jtraced-cpp", "traced-cpp")
      printf "jtraced >= traced, second pair of the round: %s\n", count("jtraced-cpp2", "traced-cpp2")
      printf "traced: %s; jtraced: %s\n", stats("traced-cpp", "traced-cpp2"), stats("jtraced-cpp", "jtraced-cpp2")
    }' "$@"
}

# The two-build rounds' summary (-b): per cell, the means over the rounds.
summarize_builds() {
  awk '
    $1 == "builds" && $2 ~ /^[0-9]+$/ {
      n++
      for (i = 3; i + 4 <= NF; i++) {
        if ($i !~ /^(base|jtraced)-(cpp|java)$/) continue
        c = $i; cells[c] = 1; rate[c] += $(i + 1); kept[c] += $(i + 2); ingest[c] += $(i + 3); readout[c] += $(i + 4)
      }
    }
    END {
      printf "build rounds: %d\n", n
      for (c in cells) printf "%s: mean %.2f M slices/s, kept %.2f %%, ingest CPU %.3f s, read-out CPU %.3f s\n",
        c, rate[c] / n, kept[c] / n, ingest[c] / n, readout[c] / n
    }' "$@"
}

# Round lines are "round N ..." or "control N ..."; a saved run's own summary lines are neither.
summarize_all() {
  if grep -Eq '^round [0-9]+ ' "$@"; then
    summarize "$@"
  elif grep -Eq '^control [0-9]+ ' "$@"; then
    summarize_control "$@"
  elif grep -Eq '^builds [0-9]+ ' "$@"; then
    summarize_builds "$@"
  else
    echo "no round lines"
    return 1
  fi
}

if [ "${1:-}" = --summarize ]; then
  shift
  summarize_all "$@"
  exit
fi

rounds=5 n=1000000 smb_kb=0 control=0 base= producer=java
while getopts "cr:n:k:b:p:" o; do
  case $o in
    c) control=1 ;; r) rounds=$OPTARG ;; n) n=$OPTARG ;; k) smb_kb=$OPTARG ;; b) base=$OPTARG ;; p) producer=$OPTARG ;;
    *) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 1 ;;
  esac
done

# One burst into a fresh service: "rate kept ingest readout readable", or zeros when the run printed
# no result.
cell() {
  "$here/burst-bench.sh" -s "$1" -p "$2" -n "$n" -k "$smb_kb" -r 1 2>&1 | sed -n \
    's/^run 1: producer \([0-9.]*\) M slices\/s, kept \([0-9.]*\) %.*ingest \([0-9.]*\) s, read-out \([0-9.]*\) s.*readable \([0-9.]*\) %.*/\1 \2 \3 \4 \5/p' \
    | grep . || echo "0 0 0 0 0"
}

lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
if [ -n "$base" ]; then
  this=${JTRACED_BIN:-${JPERFETTO_BIN:-$here/../target/jperfetto/bin}}
  echo "# $rounds rounds of: jtraced of $base <- $producer, jtraced of $this <- $producer; n=$n smb_kb=$smb_kb"
  echo "# per cell: M slices/s, % kept, ingest CPU s, read-out CPU s, % readable"
  for r in $(seq "$rounds"); do
    line="builds $r base-$producer $(JTRACED_BIN=$base cell jtraced "$producer")"
    line="$line jtraced-$producer $(JTRACED_BIN=$this cell jtraced "$producer")"
    echo "$line" | tee -a "$lines"
  done
  summarize_all "$lines"
  exit
fi
if [ "$control" = 1 ]; then
  echo "# $rounds control rounds of: traced <- cpp, jtraced <- cpp, traced <- cpp, jtraced <- cpp; n=$n smb_kb=$smb_kb"
  echo "# per cell: M slices/s, % kept, ingest CPU s, read-out CPU s, % readable"
  for r in $(seq "$rounds"); do
    line="control $r"
    for c in traced-cpp jtraced-cpp traced-cpp2 jtraced-cpp2; do
      s=${c%%-*}
      line="$line $c $(cell "$s" cpp)"
    done
    echo "$line" | tee -a "$lines"
  done
  summarize_all "$lines"
  exit
fi
echo "# $rounds rounds of: traced <- cpp, traced <- java, jtraced <- cpp, jtraced <- java; n=$n smb_kb=$smb_kb"
echo "# per cell: M slices/s, % kept, ingest CPU s, read-out CPU s, % readable"
for r in $(seq "$rounds"); do
  line="round $r"
  for s in traced jtraced; do
    for p in cpp java; do
      line="$line $s-$p $(cell "$s" "$p")"
    done
  done
  echo "$line" | tee -a "$lines"
done
summarize_all "$lines"
