#!/bin/sh
# The runtime image's AOT caches (AppCDS archives before JDK 25), trained at build time: the tools
# module's package phase runs this once the core's has built the image (scripts/build-image.sh).
#
#   scripts/train-image.sh IMAGE TOOLS_JAR
#
# One training run (scripts/train-cds.sh): jtraced, and two clients, one after the other:
#   - `jperfetto-tools aot-training core/src/main/jlink/training.pbtxt`, against jtraced: the common
#     TrackEvent shapes, traced from several threads into a session it records itself. jtraced's
#     cache gets what a producer's burst and its read-out run in the service (nothing else trains it);
#     the tools JVM's own cache (TOOLS_JAR's name with .aot, beside it, never in the image) what a
#     producer runs, for ref-producer.
#   - `jperfetto demo -t 2s -o /dev/null`, on sockets of its own, so in-process: the product's demo
#     (a multi-threaded TrackEvent workload, jvm.jfr) recorded through the jperfetto command's path
#     into an embedded jtraced. jperfetto's cache gets the consumer, the producer, JFR and the
#     in-process service from a command users have anyway. Kept off jtraced, so jtraced's cache
#     is trained on the same workload as before the tools moved out, nothing else.
# A launcher's cache fits only a JVM with its own class path, so each JVM trains its own.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 IMAGE TOOLS_JAR" >&2; exit 2; }
image=$1 jar=$2
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$image/bin/jtraced" ] || { echo "train-image: no image at $image: nothing to train" >&2; exit 0; }
own=$(mktemp -d "${TMPDIR:-/tmp}/jperfetto-train-demo.XXXXXX")
trap 'rm -rf "$own"' EXIT
export JPERFETTO_BIN="$image/bin" JPERFETTO_TOOLS_JAR="$jar"
"$root/scripts/train-cds.sh" "$image" jtraced \
  -a "${jar%.jar}" "$root/scripts/jperfetto-tools" aot-training "$root/core/src/main/jlink/training.pbtxt" \
  -- -a "$image/lib/jperfetto" env PERFETTO_CONSUMER_SOCK_NAME="$own/consumer" \
  PERFETTO_PRODUCER_SOCK_NAME="$own/producer" "$image/bin/jperfetto" demo -t 2s -o /dev/null
