#!/bin/sh
# Builds the jperfetto runtime image: jlink over our module and the modular protobuf-java, then
# the launchers, then (when the image has them) an AppCDS/AOT training run.
#
#   scripts/build-image.sh OUTPUT MODULE_PATH NAME=MODULE/MAINCLASS...
#
# jlink options live in src/main/jlink/jlink.args (shared with PackagingIT). JAVA_HOME picks the
# JDK whose jlink (and so whose runtime) goes into the image; scripts/find-jdk.sh finds one if unset.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OUTPUT MODULE_PATH NAME=MODULE/MAINCLASS..." >&2; exit 2; }
out=$1 modpath=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/find-jdk.sh"

rm -rf "$out"
"$JAVA_HOME/bin/jlink" @"$root/src/main/jlink/jlink.args" --module-path "$modpath" --output "$out"
"$root/scripts/install-launchers.sh" "$out" "$@"
"$root/scripts/train-cds.sh" "$out"
echo "jperfetto runtime image: $out ($(du -sh "$out" | cut -f1))"
