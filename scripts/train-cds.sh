#!/bin/sh
# Training run for the launchers' class archives (CDS / AOT cache), best effort.
#
#   scripts/train-cds.sh IMAGE 'SERVER [SERVER_ARGS...]' [CLIENT [CLIENT_ARGS...] [-- CLIENT [CLIENT_ARGS...]]...]
#   e.g. scripts/train-cds.sh target/jperfetto jtraced jperfetto --system --txt -c CFG -o /dev/null
#
# Starts IMAGE/bin/SERVER (the second argument is split at spaces) with its sockets in a temp dir (PERFETTO_PRODUCER_SOCK_NAME /
# PERFETTO_CONSUMER_SOCK_NAME), waits for the consumer socket, runs each CLIENT with its CLIENT_ARGS
# against it, one after the other (clients are separated by a lone --), then stops SERVER with SIGTERM.
# A CLIENT is a launcher of the image (IMAGE/bin/CLIENT, its archive IMAGE/lib/CLIENT.EXT), or
# `-a ARCHIVE COMMAND`: a command outside the image that passes JPERFETTO_JAVA_OPTS to its JVM as the
# launchers do (scripts/jperfetto-tools), its archive ARCHIVE.EXT. Each JVM records the classes it used:
#   runtime 25+:   -XX:AOTCacheOutput=....aot    (AOT cache, JEP 483/514/515)
#   runtime 22-24: -XX:ArchiveClassesAtExit=....jsa (dynamic AppCDS over the image's
#                  default CDS archive, which build-image.sh has jlink generate for those runtimes)
# The launcher picks the archive up when present. A failed training leaves no archive and only warns:
# the image works without one, it just starts slower.
set -u
# shellcheck disable=SC2086  # SERVER_ARGS are split on purpose
[ $# -ge 2 ] || { echo "usage: $0 IMAGE SERVER [CLIENT [CLIENT_ARGS...] [-- CLIENT ...]...]" >&2; exit 2; }
image=$1 server=${2%% *} server_args=
case $2 in *" "*) server_args=${2#* } ;; esac
shift 2

warn() { echo "train-cds: WARNING: $*; $image starts without that archive" >&2; }

feature=0
while IFS='=' read -r key value; do
  if [ "$key" = JAVA_VERSION ]; then value=${value#\"}; feature=${value%%[!0-9]*}; break; fi
done < "$image/release"
if [ "$feature" -ge 25 ]; then ext=aot; else ext=jsa; fi
record() {  # the JVM option that makes a JVM write its archive $1 (a path without the extension)
  if [ "$ext" = aot ]; then echo "-XX:AOTCacheOutput=$1.aot"; else echo "-XX:ArchiveClassesAtExit=$1.jsa"; fi
}
if [ "$ext" = jsa ] && [ ! -f "$image/lib/server/classes.jsa" ]; then
  warn "runtime $feature has no default CDS archive to layer AppCDS on"; exit 0
fi
rm -f "$image/lib/$server.$ext"

dir=$(mktemp -d "${TMPDIR:-/tmp}/jperfetto-train.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export PERFETTO_PRODUCER_SOCK_NAME="$dir/producer" PERFETTO_CONSUMER_SOCK_NAME="$dir/consumer"
mkfifo "$dir/stdin"
JPERFETTO_JAVA_OPTS=$(record "$image/lib/$server") "$image/bin/$server" $server_args < "$dir/stdin" > "$dir/server.log" 2>&1 &
pid=$!
exec 3> "$dir/stdin"
tries=0
while [ ! -S "$dir/consumer" ]; do
  if ! kill -0 "$pid" 2>/dev/null || [ $tries -ge 600 ]; then
    kill -TERM "$pid" 2>/dev/null
    warn "$server did not open $dir/consumer: $(grep -v -e AOT -e 'Picked up' "$dir/server.log" | tail -3)"
    rm -f "$image/lib/$server.$ext"
    exit 0
  fi
  tries=$((tries + 1))
  sleep 0.1
done

# run_client N WORDS...: runs the first N words (a client, see above) with its archive recorded.
archives=
run_client() {
  n=$1 total=$(($# - 1)) i=0
  shift
  while [ $i -lt $total ]; do  # keep the first n words: rotate them to the end, drop the rest
    a=$1; shift
    [ $i -lt "$n" ] && set -- "$@" "$a"
    i=$((i + 1))
  done
  if [ "$1" = -a ]; then
    archive=$2; shift 2
  else
    archive=$image/lib/$1 name=$1; shift; set -- "$image/bin/$name" "$@"
  fi
  rm -f "$archive.$ext"
  if ! JPERFETTO_JAVA_OPTS=$(record "$archive") "$@" < /dev/null > "$dir/client.log" 2>&1; then
    warn "$* failed: $(grep -v -e AOT -e 'Picked up' "$dir/client.log" | tail -3)"
    rm -f "$archive.$ext"
  fi
  archives="$archives $archive"
}
while [ $# -gt 0 ]; do
  n=0
  for a in "$@"; do [ "$a" = -- ] && break; n=$((n + 1)); done
  [ "$n" -gt 0 ] && run_client "$n" "$@"
  shift "$n"
  [ $# -gt 0 ] && shift  # the --
done

kill -TERM "$pid" 2>/dev/null
exec 3>&-
wait "$pid"
for archive in "$image/lib/$server" $archives; do
  if [ -f "$archive.$ext" ]; then
    echo "train-cds: $archive.$ext ($(du -h "$archive.$ext" | cut -f1))"
  else
    warn "no archive $archive.$ext: $(tail -3 "$dir/server.log")"
  fi
done
