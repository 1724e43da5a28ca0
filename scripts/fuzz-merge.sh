#!/usr/bin/env bash
# Adds to a fuzz test's committed corpus (test-fixtures/fuzz/...) the inputs of the corpus the
# fuzzer grew under target/fuzz that reach code the committed ones do not (libFuzzer's merge,
# counting covered edges only, so the committed set stays small). Run after `./mvnw -pl core -Pfuzz test`.
#
#   scripts/fuzz-merge.sh org.jperfetto.ipc.wire.FrameReaderFuzzTest frames
#
# The merge runs Jazzer outside JUnit (its merge re-launches the JVM per batch), on the test class
# path plus the JUnit launcher. See docs/fuzzing.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
class=${1:?fuzz test class, e.g. org.jperfetto.ipc.wire.FrameReaderFuzzTest}
method=${2:?fuzz test method, e.g. frames}
cd "$here"
. scripts/find-jdk.sh
generated=$here/target/fuzz/.cifuzz-corpus/$class/$method
[ -d "$generated" ] || { echo "no generated corpus at $generated: run ./mvnw -pl core -Pfuzz test first" >&2; exit 1; }
pkg=${class%.*}
committed=$here/test-fixtures/fuzz/${pkg//.//}/${class##*.}Inputs/$method
mkdir -p "$committed" target/fuzz/lib
cp=$(./mvnw -B -q -pl core dependency:build-classpath -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test)
# The launcher (left out of the test class path: surefire brings its own) in the engine's version.
engine=$(tr ':' '\n' <<<"$cp" | grep -m1 '/junit-platform-engine-')
version=$(basename "$engine" .jar); version=${version#junit-platform-engine-}
./mvnw -B -q -pl core dependency:copy -Dartifact="org.junit.platform:junit-platform-launcher:$version" \
  -DoutputDirectory=target/fuzz/lib
before=$(ls "$committed" | wc -l)
(cd target/fuzz && "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
  $JPERFETTO_UNSAFE_FLAG -XX:+EnableDynamicAgentLoading \
  -cp "$here/target/test-classes:$here/target/classes:$cp:$here/target/fuzz/lib/junit-platform-launcher-$version.jar" \
  com.code_intelligence.jazzer.Jazzer --target_class="$class" --target_method="$method" \
  --instrument='org.jperfetto.**,com.google.protobuf.**' \
  -merge=1 -use_counters=0 "$committed" "$generated" 2>&1 | grep '^MERGE-OUTER')
echo "$committed: $before -> $(ls "$committed" | wc -l) files"
