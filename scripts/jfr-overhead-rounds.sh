#!/usr/bin/env bash
# What Java stack samples cost a CPU-bound thread (issue 41, docs/jfr.md "Cost"): JfrOverheadBench's
# cpuBound in two modes, interleaved round by round (one JMH fork each), so that the machine's drift
# hits both alike; prints each run, then each mode's mean and the paired mean difference with its
# standard error. Build the benchmarks first: ./mvnw -B -q -pl core -Pbench -DskipTests test-compile
#
#   scripts/jfr-overhead-rounds.sh [ROUNDS=20] [MODE_OFF=bridgeNoSamples] [MODE_ON=bridge]
#   (jfrNoSamples / jfr: JFR's own sampling alone, events dropped)
#   JMH_RUN: each fork's warm-up and measurement (default -wi 3 -w 1s -i 5 -r 1s; a longer warm-up,
#   e.g. -wi 15 -w 1s -i 10 -r 1s, measures the steady state after the bridge's code is compiled)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-20}
run=${JMH_RUN:--wi 3 -w 1s -i 5 -r 1s}
off=${2:-bridgeNoSamples}
on=${3:-bridge}
cp=$here/target/test-classes:$here/target/classes:$(cd "$here" && ./mvnw -B -q -pl core -Pbench dependency:build-classpath \
  -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test 2>/dev/null)
java=$(. "$here/scripts/find-jdk.sh" >/dev/null 2>&1; jperfetto_find_jdk >/dev/null 2>&1; echo "${JAVA_HOME:-/usr}/bin/java")
flags="--enable-native-access=ALL-UNNAMED"
"$java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1 && flags="$flags --sun-misc-unsafe-memory-access=allow"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$rounds"); do
  for m in "$off" "$on"; do
    # shellcheck disable=SC2086
    v=$("$java" $flags -cp "$cp" org.openjdk.jmh.Main 'JfrOverheadBench.cpuBound' -p mode="$m" -f 1 $run \
      -jvmArgs "$flags" 2>/dev/null | awk '/^JfrOverheadBench.cpuBound/ {print $(NF-3)}')
    echo "round $r $m $v" | tee -a "$out"
  done
done
awk -v off="$off" -v on="$on" '
  $3 == off {a[$2] = $4; so += $4; no++}
  $3 == on {b[$2] = $4; sn += $4; nn++}
  END {
    for (r in a) if (r in b) {d = b[r] - a[r]; n++; s += d; ss += d * d}
    mo = so / no; mean = s / n; se = sqrt((ss - n * mean * mean) / (n - 1) / n)
    printf "%s mean %.2f us/op, %s mean %.2f us/op; paired difference %+.2f us (%+.2f %% +- %.2f %%, one standard error, %d rounds)\n",
      off, mo, on, sn / nn, mean, 100 * mean / mo, 100 * se / mo, n
  }' "$out"
