#!/bin/sh
# Training run for the launchers' class archives (CDS / AOT cache), best effort.
#
#   scripts/train-cds.sh IMAGE 'SERVER [SERVER_ARGS...]' [CLIENT [CLIENT_ARGS...]]
#   e.g. scripts/train-cds.sh target/jperfetto jtraced jperfetto --system --txt -c CFG -o /dev/null
#
# Starts IMAGE/bin/SERVER (the second argument is split at spaces) with its sockets in a temp dir (PERFETTO_PRODUCER_SOCK_NAME /
# PERFETTO_CONSUMER_SOCK_NAME), waits for the consumer socket, runs IMAGE/bin/CLIENT CLIENT_ARGS
# against it, then stops SERVER with SIGTERM. Each of the two JVMs records the classes it used:
#   runtime 25+:   -XX:AOTCacheOutput=IMAGE/lib/NAME.aot    (AOT cache, JEP 483/514/515)
#   runtime 22-24: -XX:ArchiveClassesAtExit=IMAGE/lib/NAME.jsa (dynamic AppCDS over the image's
#                  default CDS archive, which build-image.sh has jlink generate for those runtimes)
# The launcher picks the archive up when present. A failed training leaves no archive and only warns:
# the image works without one, it just starts slower.
set -u
# shellcheck disable=SC2086  # SERVER_ARGS are split on purpose
[ $# -ge 2 ] || { echo "usage: $0 IMAGE SERVER [CLIENT [CLIENT_ARGS...]]" >&2; exit 2; }
image=$1 server=${2%% *} server_args=
case $2 in *" "*) server_args=${2#* } ;; esac
shift 2
client=${1:-}
[ $# -ge 1 ] && shift

warn() { echo "train-cds: WARNING: $*; $image starts without that archive" >&2; }

feature=0
while IFS='=' read -r key value; do
  if [ "$key" = JAVA_VERSION ]; then value=${value#\"}; feature=${value%%[!0-9]*}; break; fi
done < "$image/release"
if [ "$feature" -ge 25 ]; then ext=aot; else ext=jsa; fi
record() {  # the JVM option that makes launcher $1 write its archive
  if [ "$ext" = aot ]; then echo "-XX:AOTCacheOutput=$image/lib/$1.aot"; else echo "-XX:ArchiveClassesAtExit=$image/lib/$1.jsa"; fi
}
if [ "$ext" = jsa ] && [ ! -f "$image/lib/server/classes.jsa" ]; then
  warn "runtime $feature has no default CDS archive to layer AppCDS on"; exit 0
fi
rm -f "$image/lib/$server.$ext" ${client:+"$image/lib/$client.$ext"}

dir=$(mktemp -d "${TMPDIR:-/tmp}/jperfetto-train.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export PERFETTO_PRODUCER_SOCK_NAME="$dir/producer" PERFETTO_CONSUMER_SOCK_NAME="$dir/consumer"
mkfifo "$dir/stdin"
JPERFETTO_JAVA_OPTS=$(record "$server") "$image/bin/$server" $server_args < "$dir/stdin" > "$dir/server.log" 2>&1 &
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

if [ -n "$client" ]; then
  if ! JPERFETTO_JAVA_OPTS=$(record "$client") "$image/bin/$client" "$@" < /dev/null > "$dir/client.log" 2>&1; then
    warn "$client $* failed: $(grep -v -e AOT -e 'Picked up' "$dir/client.log" | tail -3)"
    rm -f "$image/lib/$client.$ext"
  fi
fi

kill -TERM "$pid" 2>/dev/null
exec 3>&-
wait "$pid"
for name in "$server" $client; do
  if [ -f "$image/lib/$name.$ext" ]; then
    echo "train-cds: $image/lib/$name.$ext ($(du -h "$image/lib/$name.$ext" | cut -f1))"
  else
    warn "no archive for $name: $(tail -3 "$dir/server.log")"
  fi
done
