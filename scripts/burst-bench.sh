#!/usr/bin/env bash
# The reference burst (docs/performance.md), side by side: a producer writes N slices
# "ref_slice" (+ a counter every 10th) as fast as it can while a perfetto CLI records them into one
# 256 MiB DISCARD buffer; per run it prints the producer's rate, the share of slices kept, the
# service's CPU while ingesting and while the trace is read out, and the share of slices readable:
# kept in packets that trace_processor reads (after a loss it skips a sequence's packets that need
# incremental state until the producer clears that state; `jperfetto summary` says so too).
#
#   scripts/burst-bench.sh [-s jtraced|traced] [-p java|cpp] [-n N] [-k SMB_KB] [-r RUNS] [-w] [-f]
#
#   -s   the service (default jtraced); traced needs $UPSTREAM_OUT/traced
#   -p   the producer: java (scripts/jperfetto-tools ref-producer, on JPERFETTO_BIN's java) or cpp
#        (the C++ SDK app at $REF_APP)
#   -n   slices per burst (default 1000000); -k the producer's SMB size hint in KiB (0: default)
#   -r   bursts (default 3); each into a freshly started service, unless -w (one warm service)
#   -f   write_into_file: the service writes the trace into the CLI's file itself (every second and
#        at the end) instead of the CLI reading it out
#   -c   the consumer: perfetto ($UPSTREAM_OUT/perfetto, the default when present) or jperfetto
#   JTRACED_BIN: the directory of the jtraced to run (another build's, to compare two versions);
#   KEEP_TRACES: a directory to keep each run's trace in (<service>-<producer>-<run>.perfetto-trace;
#   `scripts/jperfetto-tools gaps N TRACE` on one says where in the burst its slices were lost);
#   BURST_DELAY: seconds between the service being up (traced: its sockets exist; jtraced: its ready
#   line, printed after its JIT warm-up) and the producer starting (0.3)
#   -e PID  use the service already listening on $PERFETTO_{PRODUCER,CONSUMER}_SOCK_NAME (pid PID,
#        for its CPU figures) instead of starting one: to run it under a profiler
#
# Upstream binaries are not part of this repository: build google/perfetto outside it (see
# docs/interop.md) and point UPSTREAM_OUT at its output directory; REF_APP at the C++ side of the
# workload (../shared/bench-peers/ref_sdk_app.cc built against it).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=${JPERFETTO_BIN:-$here/target/jperfetto/bin}
S=${JTRACED_BIN:-$B}   # where jtraced comes from (another build's, to compare two versions)
U=${UPSTREAM_OUT:-}
service=jtraced producer=java n=1000000 smb_kb=0 runs=3 warm=0 consumer= external= into_file=0
while getopts "s:p:n:k:r:c:e:wf" o; do
  case $o in
    s) service=$OPTARG ;; p) producer=$OPTARG ;; n) n=$OPTARG ;; k) smb_kb=$OPTARG ;;
    r) runs=$OPTARG ;; c) consumer=$OPTARG ;; e) external=$OPTARG; warm=1 ;; w) warm=1 ;; f) into_file=1 ;;
    *) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 1 ;;
  esac
done
[ -x "$B/jperfetto" ] || { echo "no $B/jperfetto: run ./mvnw -B -q package -DskipTests first" >&2; exit 1; }
if [ -z "$consumer" ]; then
  if [ -n "$U" ] && [ -x "$U/perfetto" ]; then consumer=perfetto; else consumer=jperfetto; fi
fi
need() { [ -x "$1" ] || { echo "missing $1 ($2)" >&2; exit 1; }; }
[ "$service" = traced ] && need "$U/traced" "set UPSTREAM_OUT"
[ "$consumer" = perfetto ] && need "$U/perfetto" "set UPSTREAM_OUT"
[ "$producer" = cpp ] && need "${REF_APP:-}" "set REF_APP"

dir=$(mktemp -d /tmp/burst.XXXXXX)
trap 'kill $(jobs -p) ${prod:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
if [ -z "$external" ]; then
  export PERFETTO_PRODUCER_SOCK_NAME=$dir/p.sock PERFETTO_CONSUMER_SOCK_NAME=$dir/c.sock
fi
# A generous duration: the session outlives the burst; the CLI reads the trace out after it.
dur_ms=$(( n / 200 + 4000 ))
cat > "$dir/cfg.pbtxt" <<EOF
buffers { size_kb: 262144 fill_policy: DISCARD }
data_sources { config { name: "track_event" } }
duration_ms: $dur_ms
EOF
if [ "$into_file" = 1 ]; then
  printf 'write_into_file: true\nfile_write_period_ms: 1000\n' >> "$dir/cfg.pbtxt"
fi

# utime+stime of a pid in clock ticks
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

start_service() {
  if [ -n "$external" ]; then svc=$external; return; fi
  rm -f "$dir"/p.sock "$dir"/c.sock
  if [ "$service" = traced ]; then "$U/traced" > "$dir/service.log" 2>&1 &
  else "$S/jtraced" > "$dir/service.log" 2>&1 &
  fi
  svc=$!
  for _ in $(seq 200); do [ -S "$dir/c.sock" ] && [ -S "$dir/p.sock" ] && break; sleep 0.05; done
  # jtraced binds at once but serves after its JIT warm-up: it is started when it says it listens
  # (traced serves as soon as its sockets exist).
  if [ "$service" = jtraced ]; then
    for _ in $(seq 400); do grep -q '^jtraced: listening on' "$dir/service.log" && break; sleep 0.025; done
  fi
}

record() {
  if [ "$consumer" = perfetto ]; then "$U/perfetto" --txt -c "$dir/cfg.pbtxt" -o "$dir/trace" > "$dir/cli.log" 2>&1
  else "$B/jperfetto" --system --txt -c "$dir/cfg.pbtxt" -o "$dir/trace" > "$dir/cli.log" 2>&1
  fi
}

run_producer() {
  if [ "$producer" = cpp ]; then "$REF_APP" producer "$n" 10 30000 "$smb_kb" 500
  else JPERFETTO_BIN=$B "$here/scripts/jperfetto-tools" ref-producer "$n" 10 30000 "$smb_kb" 500
  fi
}

echo "# service=$service producer=$producer consumer=$consumer n=$n smb_kb=$smb_kb warm=$warm write_into_file=$into_file"
[ "$warm" = 1 ] && start_service
for r in $(seq "$runs"); do
  [ "$warm" = 1 ] || start_service
  # The producer's output comes through a pipe that this shell blocks on: during the burst the
  # harness must take no CPU. (It used to poll the output with grep and sleep every 10 ms; on 2
  # cores each poll's fork and exec held the core the producer did not for ~2 ms, the service's
  # thread and the C++ SDK's IPC thread waited behind it, and ftrace's sched_switch put most of a
  # burst's loss, into either service, in those waits.)
  : > "$dir/producer.out"
  exec {pout}< <(run_producer 2> "$dir/producer.err")
  prod=$!
  sleep ${BURST_DELAY:-0.3}   # the producer connects and registers before the session starts
  c0=$(ticks "$svc")
  record &
  cli=$!
  # ingest: from the session's start until the producer's burst and flush are done (+ 200 ms)
  while IFS= read -r l <&"$pout"; do
    printf '%s\n' "$l" >> "$dir/producer.out"
    [[ $l == producer:* ]] && break
  done
  sleep 0.2
  c1=$(ticks "$svc")
  wait $cli || true
  c2=$(ticks "$svc")
  cat <&"$pout" >> "$dir/producer.out"   # the rest, until the producer exits
  exec {pout}<&-
  wait $prod 2>/dev/null || true
  line=$(grep '^producer:' "$dir/producer.out" || echo "producer: (no result)")
  rate=$(sed -n 's/.*slices_per_s=\([0-9]*\).*/\1/p' <<<"$line")
  sum=$("$B/jperfetto" summary "$dir/trace" 2>/dev/null || echo "slice_begins=0")
  kept=$(sed -n 's/.* slice_begins=\([0-9]*\).*/\1/p' <<<"$sum")
  readable=$(sed -n 's/.* readable_slice_begins=\([0-9]*\).*/\1/p' <<<"$sum")
  bytes=$(stat -c %s "$dir/trace" 2>/dev/null || echo 0)
  awk -v r="$r" -v rate="${rate:-0}" -v kept="$kept" -v rd="${readable:-0}" -v n="$n" -v i=$((c1 - c0)) \
      -v o=$((c2 - c1)) -v hz="$hz" -v b="$bytes" 'BEGIN {
    printf "run %d: producer %.2f M slices/s, kept %.1f %% (%d), service cpu ingest %.2f s, read-out %.2f s, trace %.1f MB, readable %.1f %%\n",
      r, rate / 1e6, 100 * kept / n, kept, i / hz, o / hz, b / 1e6, 100 * rd / n }'
  if [ -n "${KEEP_TRACES:-}" ]; then
    mkdir -p "$KEEP_TRACES" && cp "$dir/trace" "$KEEP_TRACES/$service-$producer-$r.perfetto-trace" 2>/dev/null || true
  fi
  [ "$warm" = 1 ] || { kill "$svc" 2>/dev/null; wait "$svc" 2>/dev/null || true; }
done
[ -n "$external" ] || [ "$warm" = 0 ] || kill "$svc" 2>/dev/null || true
