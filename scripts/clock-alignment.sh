#!/usr/bin/env bash
# Do Java events line up with the kernel's timeline? Records, through each service in turn
# (upstream traced, then jtraced), upstream traced_probes' sched_switch events next to
# `jperfetto demo --producer`'s TrackEvent slices, with the upstream perfetto CLI, and prints for
# each trace the share of Java slice begins that fall inside a running interval of their own thread
# (converted to BOOTTIME through the service's clock snapshot), and MONOTONIC - BOOTTIME in the
# service's first snapshot.
#
#   UPSTREAM_OUT=path/to/perfetto/out/dir scripts/clock-alignment.sh [runs=2]
#
# Needs root (traced_probes' ftrace) and tracefs at /sys/kernel/tracing (the script mounts it if it
# can). Upstream binaries are built outside this repository (docs/interop.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=${JPERFETTO_BIN:-$here/target/jperfetto/bin}
U=${UPSTREAM_OUT:?set UPSTREAM_OUT to an upstream build with traced, traced_probes and perfetto}
runs=${1:-2}
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
cp=$here/target/classes:$here/target/test-classes:$(cd "$here" && ./mvnw -B -q -pl core dependency:build-classpath \
  -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=test 2>/dev/null)
java=$(. "$here/scripts/find-jdk.sh" >/dev/null 2>&1; jperfetto_find_jdk >/dev/null 2>&1; echo "${JAVA_HOME:-/usr}/bin/java")

dir=$(mktemp -d /tmp/clockalign.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
export PERFETTO_PRODUCER_SOCK_NAME=$dir/p.sock PERFETTO_CONSUMER_SOCK_NAME=$dir/c.sock
cat > "$dir/cfg.pbtxt" <<CFG
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" ftrace_config {
  ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
  compact_sched { enabled: false } } } }
data_sources { config { name: "track_event" } }
duration_ms: 4000
CFG
for r in $(seq "$runs"); do
  for service in traced jtraced; do
    rm -f "$dir"/p.sock "$dir"/c.sock
    if [ $service = traced ]; then "$U/traced" > "$dir/svc.log" 2>&1 & else "$B/jtraced" > "$dir/svc.log" 2>&1 & fi
    svc=$!
    for _ in $(seq 200); do [ -S "$dir/p.sock" ] && [ -S "$dir/c.sock" ] && break; sleep 0.05; done
    "$U/traced_probes" > "$dir/probes.log" 2>&1 &
    probes=$!
    "$B/jperfetto" demo --producer -t 8s > "$dir/demo.log" 2>&1 &
    demo=$!
    sleep 2
    "$U/perfetto" --txt -c "$dir/cfg.pbtxt" -o "$dir/trace" > "$dir/cli.log" 2>&1
    kill $demo $probes $svc 2>/dev/null || true
    wait $demo $probes $svc 2>/dev/null || true
    echo "run $r $service: $("$java" -cp "$cp" org.jperfetto.scripts.SchedAlignment "$dir/trace" 2>/dev/null)"
    [ -z "${KEEP:-}" ] || cp "$dir/trace" "$KEEP/$service-$r.pftrace"
  done
done
