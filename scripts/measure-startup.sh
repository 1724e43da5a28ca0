#!/bin/sh
# Start-to-socket-ready time of a jperfetto launcher: the time from starting it until its consumer
# socket file exists, over N runs (prints every run, then min and median in ms).
#
#   scripts/measure-startup.sh [-n N] [-s] [LAUNCHER [ARGS...]]     default: target/jperfetto/bin/jtraced
#
# -s also waits, after the socket, for jtraced's ready line ("jtraced: listening on") and reports
# start-to-serving: jtraced binds its sockets first and builds the service after, clients that
# connect in between wait in the listen backlog, so serving is the latency a first client sees.
#
# The launcher gets PERFETTO_PRODUCER_SOCK_NAME / PERFETTO_CONSUMER_SOCK_NAME in a fresh temp dir
# (the variables upstream and jtraced honour), its stdin from a pipe held open until the socket
# appears, and SIGTERM afterwards. JPERFETTO_NO_ARCHIVE=1 measures without the trained archive
# (JPERFETTO_NO_ARCHIVE=1 JPERFETTO_JAVA_OPTS=-Xshare:off: without any CDS at all). Figures on a
# loaded machine are noisy: compare min values.
set -eu
runs=10
serving=0
while :; do
  case "${1:-}" in
    -n) runs=$2; shift 2 ;;
    -s) serving=1; shift ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || set -- "$(cd "$(dirname "$0")/.." && pwd)/target/jperfetto/bin/jtraced"
[ -x "$1" ] || { echo "measure-startup: $1 is not an executable launcher (run ./mvnw package first)" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/jperfetto-startup.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export PERFETTO_PRODUCER_SOCK_NAME="$dir/producer" PERFETTO_CONSUMER_SOCK_NAME="$dir/consumer"

now_ms() { date +%s%3N; }
times=""
served=""
i=0
while [ $i -lt "$runs" ]; do
  i=$((i + 1))
  rm -f "$dir/in" "$dir/consumer" "$dir/producer"
  mkfifo "$dir/in"
  start=$(now_ms)
  "$@" < "$dir/in" > "$dir/out" 2>&1 &
  pid=$!
  exec 3> "$dir/in"
  waited=0
  while [ ! -S "$dir/consumer" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "measure-startup: $1 exited before its socket appeared:" >&2
      cat "$dir/out" >&2
      exit 1
    fi
    waited=$((waited + 1))
    [ $waited -lt 30000 ] || { kill "$pid"; echo "measure-startup: no socket after 60 s" >&2; exit 1; }
    sleep 0.002
  done
  ms=$(( $(now_ms) - start ))
  if [ $serving = 1 ]; then
    waited=0
    until grep -q 'jtraced: listening on' "$dir/out"; do
      waited=$((waited + 1))
      [ $waited -lt 30000 ] || { kill "$pid"; echo "measure-startup: no ready line after 60 s" >&2; exit 1; }
      sleep 0.002
    done
    served="$served $(( $(now_ms) - start ))"
  fi
  kill -TERM "$pid" 2>/dev/null || true
  exec 3>&-
  wait "$pid" 2>/dev/null || true
  echo "run $i: ${ms} ms"
  times="$times $ms"
done
printf '%s\n' $times | sort -n | awk '{ v[NR] = $1 } END { printf "start-to-socket-ready: min %d ms, median %d ms over %d runs\n", v[1], v[int((NR + 1) / 2)], NR }'
if [ $serving = 1 ]; then
  printf '%s\n' $served | sort -n | awk '{ v[NR] = $1 } END { printf "start-to-serving: min %d ms, median %d ms over %d runs\n", v[1], v[int((NR + 1) / 2)], NR }'
fi
