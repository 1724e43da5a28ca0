#!/bin/sh
# Builds the jperfetto runtime image: jlink over our module and the modular protobuf-java, then
# the launchers.
#
#   scripts/build-image.sh OUTPUT MODULE_PATH NAME=MODULE/MAINCLASS...
#
# Its AOT caches come next, from the tools module's package phase (scripts/train-image.sh): their
# training workload is a tool, which the image does not hold.
# JPERFETTO_AGENT_JAR, when set, is copied to lib/jperfetto-agent.jar.
# jlink options live in core/src/main/jlink/jlink.args (shared with PackagingIT). JAVA_HOME picks the
# JDK whose jlink (and so whose runtime) goes into the image; scripts/find-jdk.sh finds one if unset.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OUTPUT MODULE_PATH NAME=MODULE/MAINCLASS..." >&2; exit 2; }
out=$1 modpath=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/find-jdk.sh"

# Runtimes before 25 have no AOT cache: their AppCDS archives layer on the image's default CDS
# archive, which jlink then has to generate (28 MB that a 25+ image does without).
cds_base=
[ "$JPERFETTO_JAVA_VERSION" -lt 25 ] && cds_base=--generate-cds-archive

rm -rf "$out"
"$JAVA_HOME/bin/jlink" @"$root/core/src/main/jlink/jlink.args" $cds_base --module-path "$modpath" --output "$out"
"$root/scripts/install-launchers.sh" "$out" "$@"
# The -javaagent / `jperfetto attach` jar (the package phase builds it first), where attach looks.
if [ -n "${JPERFETTO_AGENT_JAR:-}" ] && [ -f "$JPERFETTO_AGENT_JAR" ]; then
  cp "$JPERFETTO_AGENT_JAR" "$out/lib/jperfetto-agent.jar"
fi
echo "jperfetto runtime image: $out ($(du -sh "$out" | cut -f1))"
