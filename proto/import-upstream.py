#!/usr/bin/env python3
"""Regenerates jperfetto's proto/perfetto tree from an upstream Perfetto checkout.

Usage: proto/import-upstream.py <perfetto git dir> [<rev>]   (run from the repository root)

Takes the transitive imports of ROOTS, keeps their declarations (names, numbers, types, defaults,
reserved ranges, options such as packed: the wire ABI), drops upstream's comments and license text,
re-roots "protos/perfetto/..." imports to our proto/ source root, adds our header and Java options.
TracePacket keeps only the oneof `data` members whose payload types are in the set.
proto/perfetto/ipc/wire_protocol.proto is hand-written and not touched.
"""
import os, re, subprocess, sys, textwrap

REPO = sys.argv[1]
REV = sys.argv[2] if len(sys.argv) > 2 else 'HEAD'
OUT = 'proto'

# What jperfetto needs: the IPC ports, the configs a user may write, the common messages, and the
# trace payloads the service and the track-event SDK write (not the whole trace tree).
ROOTS = [
    'protos/perfetto/ipc/producer_port.proto',
    'protos/perfetto/ipc/consumer_port.proto',
    'protos/perfetto/ipc/relay_port.proto',
    'protos/perfetto/config/trace_config.proto',
    'protos/perfetto/config/data_source_config.proto',
    'protos/perfetto/common/commit_data_request.proto',
    'protos/perfetto/common/data_source_descriptor.proto',
    'protos/perfetto/common/observable_events.proto',
    'protos/perfetto/common/trace_stats.proto',
    'protos/perfetto/common/tracing_service_capabilities.proto',
    'protos/perfetto/common/tracing_service_state.proto',
    'protos/perfetto/common/track_event_descriptor.proto',
    'protos/perfetto/common/system_info.proto',
    'protos/perfetto/trace/clock_snapshot.proto',
    'protos/perfetto/trace/trace_uuid.proto',
    'protos/perfetto/trace/trace_packet_defaults.proto',
    'protos/perfetto/trace/interned_data/interned_data.proto',
    'protos/perfetto/trace/track_event/track_event.proto',
    'protos/perfetto/trace/track_event/track_descriptor.proto',
    'protos/perfetto/trace/track_event/range_of_interest.proto',
    'protos/perfetto/trace/perfetto/tracing_service_event.proto',
    'protos/perfetto/trace/perfetto/trace_provenance.proto',
    'protos/perfetto/trace/perfetto/concurrent_session_event.proto',
    'protos/perfetto/trace/perfetto/perfetto_metatrace.proto',
    'protos/perfetto/trace/trigger.proto',
    'protos/perfetto/trace/chrome/chrome_trigger.proto',
    'protos/perfetto/trace/remote_clock_sync.proto',
    'protos/perfetto/trace/ui_state.proto',
    'protos/perfetto/trace/test_event.proto',
    'protos/perfetto/trace/ps/process_tree.proto',
]
PACKET = 'protos/perfetto/trace/trace_packet.proto'
TRACE = 'protos/perfetto/trace/trace.proto'


def show(path):
    return subprocess.run(['git', '-C', REPO, 'show', REV + ':' + path],
                          capture_output=True, text=True, check=True).stdout


def closure(roots):
    seen = []
    todo = list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo += re.findall(r'^import\s+(?:public\s+)?"([^"]+)"', show(p), re.M)
    return sorted(seen)

def strip_comments(src):
    out = []; i = 0; n = len(src)
    while i < n:
        c = src[i]
        if c in '"\'':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(src[i:j+1]); i = j + 1
        elif src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append('\x00')  # marks a line that held a comment
            i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            out.append('\x00' + '\n\x00' * src[i:j].count('\n')); i = j + 2
        else:
            out.append(c); i += 1
    return ''.join(out)

def top_level_names(body):
    names = []; depth = 0
    for line in body.split('\n'):
        s = line.strip()
        m = re.match(r'(message|enum|service)\s+(\w+)', s)
        if m and depth == 0:
            names.append(m.group(2))
        depth += s.count('{') - s.count('}')
    return names

KIND = {
    'ipc': 'IPC requests, replies and the RPC service carried inside IPCFrame',
    'common': 'messages shared by the IPC ports, the configs and the trace',
    'config': 'trace config messages, the ones a user writes in a text config',
    'trace': 'trace packet payloads written by the service or the track-event SDK',
    'protovm': 'ProtoVM program messages referenced by configs and descriptors',
}

def convert(path, body_filter=None, extra_comment=None):
    src = show(path)
    body = strip_comments(src)
    lines = []
    for raw in body.split('\n'):
        had_comment = '\x00' in raw
        line = raw.replace('\x00', '').rstrip()
        if line.strip() == '};':
            line = line.replace('};', '}')
        s = line.strip()
        if re.match(r'syntax\s*=|package\s', s):
            continue
        m = re.match(r'import\s+"protos/(perfetto/[^"]+)";', s)
        if m:
            lines.append('import "%s";' % m.group(1)); continue
        if not s:
            if had_comment:
                continue
            if lines and lines[-1] == '':
                continue
            lines.append(''); continue
        lines.append(line)
    # Re-space: no blank lines inside blocks except around nested blocks; one between top-level ones.
    tidy = []; depth = 0
    code = [l for l in lines if l != '']
    for i, l in enumerate(code):
        s = l.strip()
        opens_block = re.match(r'(message|enum|oneof|service|extend)\s', s) is not None
        if tidy and (depth == 0 and not s.startswith('import') or
                     (opens_block and not tidy[-1].endswith('{')) or
                     (tidy[-1].strip() == '}' and depth > 0 and s != '}' and not s.startswith('}'))):
            if tidy[-1] != '':
                tidy.append('')
        tidy.append(l)
        depth += s.count('{') - s.count('}')
    if body_filter:
        tidy = body_filter(tidy)
    imports = [l for l in tidy if l.startswith('import ')]
    rest = [l for l in tidy if not l.startswith('import ')]
    while rest and rest[0] == '':
        rest.pop(0)
    names = top_level_names('\n'.join(rest))
    area = path.split('/')[2]
    header = ['// ' + l for l in textwrap.wrap(
        'jperfetto copy of upstream Perfetto %s (%s). Declares %s. Names, field numbers, types, '
        'defaults and reserved ranges are the wire ABI and are kept exactly as upstream has them; '
        'the comments are our own.' % (path, KIND[area], ', '.join(names)), 97)]
    if extra_comment:
        header += extra_comment
    text = '\n'.join(header) + '\n\nsyntax = "proto2";\n\npackage perfetto.protos;\n\n'
    if imports:
        text += '\n'.join(sorted(imports)) + '\n\n'
    text += 'option java_package = "org.jperfetto.protos";\noption java_multiple_files = true;\n\n'
    text += '\n'.join(rest) + '\n'
    dst = os.path.join(OUT, path[len('protos/'):])
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    open(dst, 'w').write(text)
    return names

SERVICE_NOTE = ['//',
    '// The IPC layer numbers methods from 1 in the order the rpcs are declared below (the',
    '// BindServiceReply carries those ids), so the rpc order is ABI: never reorder or insert.']

def packet_filter(known_types, kept_files):
    # TracePacket keeps upstream's layout, but only the oneof `data` members whose payload we model;
    # the others arrive as unknown fields and round-trip untouched.
    def f(lines):
        out = []; in_data = False; dropped = []
        for l in lines:
            s = l.strip()
            if s.startswith('import '):
                if s.split('"')[1] not in kept_files:
                    continue
            if s.startswith('oneof data'):
                in_data = True
            elif in_data and s == '}':
                in_data = False
            elif in_data:
                t = s.split()[0]
                if t not in known_types and t not in ('bytes', 'TracePacket'):
                    dropped.append(s); continue
            out.append(l)
        print('TracePacket: dropped %d oneof members' % len(dropped), file=sys.stderr)
        return out
    return f

if __name__ == '__main__':
    FILES = closure(ROOTS)
    names = []
    for f in FILES:
        note = SERVICE_NOTE if f.endswith('_port.proto') else None
        names += convert(f, extra_comment=note)
    kept = set(p[len('protos/'):] for p in FILES)
    convert('protos/perfetto/trace/trace_packet.proto', packet_filter(set(names), kept), extra_comment=[
        '//',
        '// Only the oneof `data` members whose payload type is modelled here are declared; the rest',
        '// (ftrace bundles, Android and Chrome payloads, ...) stay unknown fields and round-trip.'])
    convert('protos/perfetto/trace/trace.proto')
