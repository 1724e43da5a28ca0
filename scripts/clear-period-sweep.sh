#!/usr/bin/env bash
# What an incremental-state clear period costs and buys on a ring buffer that wraps (issue 48,
# docs/flight-recorder.md): runs org.jperfetto.producer.track.ClearPeriodSweep from the test classes
# (build them first: ./mvnw -B -q test-compile). One line per run: bytes per slice, the process's
# CPU per 1000 slices, the share of the ring's slices trace_processor can read and how many seconds
# of the end of the recording that is; period 0 never clears.
#
#   scripts/clear-period-sweep.sh [RING_KB THREADS RATE SECONDS ROUNDS PERIOD_MS...]
#   default: 256 KiB ring, 8 threads of 500 slices/s, 8 s per run, 3 rounds, 0 250 500 1000 2000 ms
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(256 8 500 8 3 0 250 500 1000 2000)
cp=$here/target/classes:$here/target/test-classes:$(cd "$here" && ./mvnw -B -q -pl core dependency:build-classpath \
  -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test 2>/dev/null)
java=$(. "$here/scripts/find-jdk.sh" >/dev/null 2>&1; jperfetto_find_jdk >/dev/null 2>&1; echo "${JAVA_HOME:-/usr}/bin/java")
flags=(--enable-native-access=ALL-UNNAMED)
"$java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1 && flags+=(--sun-misc-unsafe-memory-access=allow)
exec "$java" "${flags[@]}" -cp "$cp" org.jperfetto.producer.track.ClearPeriodSweep "${args[@]}"
