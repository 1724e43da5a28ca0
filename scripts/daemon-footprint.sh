#!/bin/sh
# jtraced as a daemon (issue 50): how soon it answers and how much memory it holds.
#
#   scripts/daemon-footprint.sh [-n STARTS] [-b BIN] [-s SLICES] [-q]
#
# Prints, for the jtraced of BIN (default target/jperfetto/bin; JTRACED_BIN as in burst-bench.sh):
#   first-answer   exec to the first answered consumer request, each start and the median over STARTS
#                  (default 5). The client is a small socket probe in this script (python3, started
#                  before jtraced, so its own start-up is not counted): it connects to the consumer
#                  socket as soon as the file exists, binds ConsumerPort and calls QueryServiceState,
#                  as `perfetto --query` does, and stops the clock at that call's reply.
#   idle RSS       VmRSS (anonymous / file-backed) of jtraced 10 s after its first answer, nothing done
#   after-session  VmRSS 10 s after a session with one 256 MiB DISCARD buffer that took a burst of
#                  SLICES (default 1000000) slices from `scripts/jperfetto-tools ref-producer` (on BIN's
#                  java) has ended (the image's own jperfetto records it; the buffer is read out and freed)
#   floor start    exec to exit of an empty main() on the image's own java, run after each start of
#                  jtraced (the JVM's own share of first-answer on this machine, at this load)
#   floor          VmRSS of an empty main() that sleeps, on the image's own java, 10 s after start
# -q: only first-answer (no RSS figures).
# Sockets live in a temp dir (PERFETTO_{PRODUCER,CONSUMER}_SOCK_NAME); every process started is stopped.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/jperfetto/bin starts=5 slices=1000000 quick=0
while getopts "n:b:s:q" o; do
  case $o in
    n) starts=$OPTARG ;; b) bin=$OPTARG ;; s) slices=$OPTARG ;; q) quick=1 ;;
    *) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2 ;;
  esac
done
jtraced_bin=${JTRACED_BIN:-$bin}
[ -x "$jtraced_bin/jtraced" ] || { echo "no $jtraced_bin/jtraced: run ./mvnw -B -q package -DskipTests" >&2; exit 1; }
. "$root/scripts/find-jdk.sh"   # JAVA_HOME: its javac compiles the floor's empty main
command -v python3 > /dev/null || { echo "daemon-footprint: needs python3 for its socket probe" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/daemon-footprint.XXXXXX")
trap 'rm -rf "$dir"' EXIT
exec python3 - "$jtraced_bin" "$bin" "$starts" "$slices" "$quick" "$dir" "${JAVA_HOME:-}" "$root/scripts/jperfetto-tools" <<'EOF'
import os, signal, socket, statistics, struct, subprocess, sys, time

jtraced_bin, bin_dir, starts, slices, quick, tmp, java_home, tools = sys.argv[1:9]
starts, slices, quick = int(starts), int(slices), quick == "1"
env = dict(os.environ, PERFETTO_PRODUCER_SOCK_NAME=tmp + "/p.sock", PERFETTO_CONSUMER_SOCK_NAME=tmp + "/c.sock")

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)

def field(num, payload):  # a length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def fields(buf):  # (number, wire type, value) of one message's fields
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(buf, i)
        elif wt == 2:
            n, i = read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v

def read_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i

def frame(request_id, num, payload):  # IPCFrame: request_id (2) and one message field
    body = varint(2 << 3) + varint(request_id) + field(num, payload)
    return struct.pack("<I", len(body)) + body

def read_frame(s):
    def exactly(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise ConnectionError("closed")
            b += c
        return b
    (n,) = struct.unpack("<I", exactly(4))
    return dict((num, v) for num, _, v in fields(exactly(n)))

def query_service_state(path):
    """BindService(ConsumerPort), then QueryServiceState; returns once its first reply came."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.sendall(frame(1, 3, field(1, b"ConsumerPort")))
        reply = read_frame(s)
        methods = {}
        for num, _, v in fields(reply.get(4, b"")):
            if num == 2:
                service_id = v
            elif num == 3:
                m = dict((n, x) for n, _, x in fields(v))
                methods[bytes(m.get(2, b"")).decode()] = m.get(1)
        invoke = varint(1 << 3) + varint(service_id) + varint(2 << 3) + varint(methods["QueryServiceState"])
        s.sendall(frame(2, 5, invoke))
        while True:
            r = read_frame(s)
            if 6 in r or 7 in r:
                return 6 in r
    finally:
        s.close()

def start_jtraced():
    for f in ("p.sock", "c.sock"):
        try:
            os.unlink(tmp + "/" + f)
        except FileNotFoundError:
            pass
    t0 = time.monotonic()
    p = subprocess.Popen([jtraced_bin + "/jtraced"], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=open(tmp + "/jtraced.err", "w"))
    while True:
        if p.poll() is not None:
            sys.exit("jtraced exited: " + open(tmp + "/jtraced.err").read())
        if os.path.exists(env["PERFETTO_CONSUMER_SOCK_NAME"]):
            try:
                if query_service_state(env["PERFETTO_CONSUMER_SOCK_NAME"]):
                    return p, (time.monotonic() - t0) * 1000
            except (ConnectionError, OSError, KeyError):
                pass
        time.sleep(0.001)

def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()

def rss(pid):
    kb = {}
    for line in open("/proc/%d/status" % pid):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
            kb[k] = int(v.split()[0])
    return "%5.1f MB (anon %.1f, file %.1f, shmem %.1f; %d threads)" % (
        kb["VmRSS"] / 1024, kb["RssAnon"] / 1024, kb["RssFile"] / 1024, kb["RssShmem"] / 1024, kb["Threads"])

# The floor: empty mains on the image's own java.
java = os.path.dirname(jtraced_bin.rstrip("/")) + "/bin/java"
javac = os.path.join(java_home, "bin", "javac") if java_home else "javac"
with open(tmp + "/Sleep.java", "w") as f:
    f.write("public class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(60_000); } }\n")
with open(tmp + "/Empty.java", "w") as f:
    f.write("public class Empty { public static void main(String[] a) {} }\n")
subprocess.run([javac, "--release", "17", "-d", tmp, tmp + "/Sleep.java", tmp + "/Empty.java"], check=True)

def floor_start():
    t0 = time.monotonic()
    subprocess.run([java, "-cp", tmp, "Empty"], check=True)
    return (time.monotonic() - t0) * 1000

times, floor_times = [], []
for i in range(starts):
    p, ms = start_jtraced()
    times.append(ms)
    if i < starts - 1 or quick:
        stop(p)
    floor_times.append(floor_start())
    print("start %d: first answer after %.0f ms; empty main %.0f ms" % (i + 1, ms, floor_times[-1]), flush=True)
print("first-answer: median %.0f ms (min %.0f, max %.0f) over %d starts; floor start (empty main, exec to exit): "
      "median %.0f ms" % (statistics.median(times), min(times), max(times), starts, statistics.median(floor_times)),
      flush=True)
if quick:
    sys.exit(0)

try:
    time.sleep(10)
    print("idle RSS 10 s after start:      " + rss(p.pid), flush=True)
    cfg = tmp + "/cfg.pbtxt"
    with open(cfg, "w") as f:
        f.write('buffers { size_kb: 262144 fill_policy: DISCARD }\n'
                'data_sources { config { name: "track_event" } }\nduration_ms: %d\n' % (slices // 200 + 4000))
    producer = subprocess.Popen([tools, "ref-producer", str(slices), "10", "30000", "0", "500"],
                                env=dict(env, JPERFETTO_BIN=bin_dir), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)
    subprocess.run([bin_dir + "/jperfetto", "--system", "--txt", "-c", cfg, "-o", tmp + "/trace"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    line = [l for l in producer.communicate()[0].splitlines() if l.startswith("producer:")]
    print("session: %s; trace %.1f MB" % (line[0] if line else "producer printed nothing",
                                          os.path.getsize(tmp + "/trace") / 1e6), flush=True)
    time.sleep(10)
    print("RSS 10 s after the session:     " + rss(p.pid), flush=True)
finally:
    stop(p)

q = subprocess.Popen([java, "-cp", tmp, "Sleep"])
time.sleep(10)
print("floor (empty main, image java): " + rss(q.pid), flush=True)
q.kill()
q.wait()
EOF
