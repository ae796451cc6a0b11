#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench's figures, one definition for every model script: the line
format, reading npu-run's and ort_bench.js's JSON, and seed 002's
three-bound lower bound of a profiled run.

Every figure is printed as

    NAME: VALUE UNIT (REF: VALUE UNIT, ratio R)

with R = VALUE / REF VALUE.  A figure whose own side or reference could not
be measured says "not measured" and why instead of a number, and the
command exits 1, so that the script (and make bench) fails.

Usage:
  figures.py get JSON KEY[.KEY...]         print one value of a JSON file
  figures.py median JSON KEY[.KEY...]...   median of that value over files
  figures.py ratio NAME VALUE UNIT REF REF_VALUE [FMT]
      VALUE and REF_VALUE in UNIT; either may instead be the reason it was
      not measured ("npu-run failed: ..."), printed as "not measured: ..."
  figures.py throughput NAME PROFILE.json [LABEL]
      simulated inferences/s of a `npu-run --profile --json` run against
      the three-bound lower bound of the same run; LABEL says which run
      ("batch 8 pipelined"), empty when the name says it
  figures.py clusters NAME PROFILE12.json PROFILE14.json
  figures.py llm NAME GENERATE.json BYTES.json [LAYERS]
      simulated decode tokens/s of `npu-run --generate --profile --json`
      against the DDR bound: the bytes a token must read (llm_bytes.py's
      total) at the DDR port's bandwidth.  With LAYERS, the model is a
      slice of a deeper one: the decode steps of its layers (labels naming
      "/layers.N/" or "present.N.") and the bytes of its layers are each
      scaled to LAYERS layers, the rest (embedding, final norm, LM head)
      kept once, and the line says so
  figures.py floor PREFIX EMU_MS WORK.json RATES.json
      the emulator's wall time of one inference (EMU_MS, or why it was not
      measured) against the host floor of the work that inference does,
      printed as PREFIX_emu_vs_floor, then the floor's two parts as
      PREFIX_floor_bytes and PREFIX_floor_macs (see floor()).  WORK.json is
      `npu-run --profile --json` (its profile.work: one inference) or
      `npu-run --generate --profile --json` (its decode_work over
      decode_work.runs decode steps: one step); RATES.json is
      `npu-bench-core --json` of the same make bench run
"""
import json
import statistics
import sys

# uapi/npu: NPU_M100_DDR_BYTES_PER_CYCLE and NPU_M100_LINK_BYTES_PER_CYCLE.
DDR_BYTES_PER_CYCLE = 256.0
LINK_BYTES_PER_CYCLE = 64.0


def get(j, key):
    for k in key.split('.'):
        j = j[int(k)] if isinstance(j, list) else j[k]
    return j


def three_bound(j):
    """Seed 002's bound T = max(T_comp, T_mem, T_net) for a profiled run,
    in cycles, from the cycle model's own tallies of that run
    (Documentation/hw/cycle-model.md, "Reading the bottleneck"):
      T_comp: the busiest arithmetic unit (TCU or CVU: the ones npu-run's
              profile counts as compute) of the busiest cluster;
      T_mem:  the bytes the DMA engines and GSDUs moved, at the DDR port's
              bandwidth (an over-count when some stay on chip);
      T_net:  the busiest directed NoC link's bytes at the link bandwidth.
    Returns (bound cycles, binding term's name, run cycles)."""
    p = j['profile']
    if not p.get('counters'):
        raise ValueError('the profile has no counters (the device reports none)')
    cycles = p['total_cycles']
    t_comp = max(max(c['tcu'], c['cvu']) for c in p['clusters']) * cycles
    ddr_bytes = sum(d['bytes'] for d in p['dma']) + p['gsdu_bytes']
    t_mem = ddr_bytes / DDR_BYTES_PER_CYCLE
    links = p['hottest_links']
    t_net = links[0]['bytes'] / LINK_BYTES_PER_CYCLE if links else 0.0
    which = max((t_comp, 'compute'), (t_mem, 'memory'), (t_net, 'network'))
    if which[0] <= 0:
        raise ValueError('the profile shows no busy unit and no traffic')
    return which[0], which[1], cycles


def line(name, value, unit, ref, ref_value, ref_unit, fmt='%.3f', why=None, ref_why=None):
    """Print one figure; returns 0, or 1 when a side was not measured."""
    ours = ('not measured: %s' % why) if why else '%s %s' % (fmt % value, unit)
    if ref_why:
        print('%s: %s (%s: not measured: %s)' % (name, ours, ref, ref_why))
        return 1
    theirs = '%s %s' % (fmt % ref_value, ref_unit)
    if why:
        print('%s: %s (%s: %s)' % (name, ours, ref, theirs))
        return 1
    ratio = value / ref_value if ref_value else float('inf')
    print('%s: %s (%s: %s, ratio %.2f)' % (name, ours, ref, theirs, ratio))
    return 0


def llm(name, gen_path, bytes_path, layers=None):
    """One decode figure against the DDR bound (see the usage)."""
    import re
    j = json.load(open(gen_path))
    b = json.load(open(bytes_path))
    clock = j['simulated']['clock_mhz'] * 1e6
    steps = j.get('profile') or []
    cycles = sum(s['cycles'] for s in steps) or j['simulated']['cycles_per_token']
    total_bytes, label = b['total'], ''
    if layers:
        n = len(b['layers'])
        pat = re.compile(r'/layers\.\d+/|present\.\d+\.')
        in_layers = sum(s['cycles'] for s in steps if pat.search(s['step']))
        if not n or not in_layers:
            return line(name, 0, 'tokens/s', 'DDR bound', None, None,
                        why='no layer steps or bytes to scale (%d layers, %d cycles)'
                        % (n, in_layers))
        cycles = cycles - in_layers + in_layers * layers / n
        total_bytes = b['other'] + sum(b['layers'].values()) * layers / n
        label = '%d layers scaled from %d, ' % (layers, n)
    bound = total_bytes / DDR_BYTES_PER_CYCLE
    return line(name, clock / cycles, 'tokens/s',
                'DDR bound: %s%.0f bytes per token at %d B/cycle'
                % (label, total_bytes, DDR_BYTES_PER_CYCLE),
                clock / bound, 'tokens/s', '%.1f')


def work_of(j):
    """The work counters of one inference (or one decode step) of an
    npu-run JSON: profile.work, or decode_work divided by its runs.
    Raises ValueError naming what is missing."""
    keys = ('load_bytes', 'store_bytes', 'macs_float', 'macs_int8')
    if isinstance(j.get('profile'), dict) and 'work' in j['profile']:
        w, runs = j['profile']['work'], 1
    elif 'decode_work' in j:
        w = j['decode_work']
        runs = w.get('runs')
        if not runs:
            raise ValueError('decode_work counts no decode step (runs: %r)' % runs)
    else:
        raise ValueError('no profile.work or decode_work (npu-run without --profile, '
                         'or a device without NPU_HAVE_WORK)')
    missing = [k for k in keys if k not in w]
    if missing:
        raise ValueError('the work counters lack %s' % ', '.join(missing))
    return {k: w[k] / runs for k in keys}


def rates_of(j):
    """memcpy bytes/s and GEMM MACs/s of npu-bench-core --json, each > 0."""
    keys = ('memcpy_bytes_per_s', 'gemm_bf16_macs_per_s', 'gemm_i8_macs_per_s')
    bad = [k for k in keys if not isinstance(j.get(k), (int, float)) or j[k] <= 0]
    if bad:
        raise ValueError('the host rates lack %s' % ', '.join(bad))
    return j


def floor(prefix, emu_ms, work_path, rates_path):
    """The host floor of one inference: the bytes its operands read and
    wrote (every unit's, DMA and GSDU included) at this machine's memcpy
    bandwidth (read + write bytes per second), plus its float MACs at the
    device core's one-thread bf16 GEMM rate and its int8 MACs at the int8
    GEMM rate, both measured by npu-bench-core in the same run.  What an
    emulator on one host thread could not beat without skipping work the
    program asks for: ratio = emulator / floor."""
    name = prefix + '_emu_vs_floor'
    value, why = side(emu_ms)
    try:
        w = work_of(json.load(open(work_path)))
        r = rates_of(json.load(open(rates_path)))
    except (OSError, ValueError, AttributeError) as e:
        return line(name, value, 'ms', 'host floor', None, None, why=why,
                    ref_why=str(e))
    moved = w['load_bytes'] + w['store_bytes']
    t_bytes = moved / r['memcpy_bytes_per_s'] * 1e3
    t_float = w['macs_float'] / r['gemm_bf16_macs_per_s'] * 1e3
    t_int8 = w['macs_int8'] / r['gemm_i8_macs_per_s'] * 1e3
    status = line(name, value, 'ms', 'host floor', t_bytes + t_float + t_int8, 'ms',
                  why=why)
    print('%s_floor_bytes: %.2f MB moved, %.3f ms at %.1f GB/s memcpy '
          '(operand loads %.2f MB, stores %.2f MB)'
          % (prefix, moved / 1e6, t_bytes, r['memcpy_bytes_per_s'] / 1e9,
             w['load_bytes'] / 1e6, w['store_bytes'] / 1e6))
    print('%s_floor_macs: %.2f M float MACs, %.3f ms at %.1f GMAC/s bf16 GEMM; '
          '%.2f M int8 MACs, %.3f ms at %.1f GMAC/s int8 GEMM'
          % (prefix, w['macs_float'] / 1e6, t_float, r['gemm_bf16_macs_per_s'] / 1e9,
             w['macs_int8'] / 1e6, t_int8, r['gemm_i8_macs_per_s'] / 1e9))
    return status


def side(arg):
    """A measured VALUE, or the reason it was not measured: (value, reason)."""
    try:
        return float(arg), None
    except ValueError:
        return None, arg


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, a = argv[1], argv[2:]
    if cmd == 'get':
        print(get(json.load(open(a[0])), a[1]))
        return 0
    if cmd == 'median':
        key, files = a[0], a[1:]
        print(statistics.median(float(get(json.load(open(f)), key)) for f in files))
        return 0
    if cmd == 'ratio':
        name, unit, ref = a[0], a[2], a[3]
        value, why = side(a[1])
        ref_value, ref_why = side(a[4])
        fmt = a[5] if len(a) > 5 else '%.3f'
        return line(name, value, unit, ref, ref_value, unit, fmt, why, ref_why)
    if cmd == 'throughput':
        name, path = a[0], a[1]
        label = a[2] + '; ' if len(a) > 2 and a[2] else ''
        j = json.load(open(path))
        try:
            bound, kind, cycles = three_bound(j)
        except (KeyError, IndexError, ValueError) as e:
            return line(name, j['simulated']['throughput_ips'], 'inferences/s',
                        '%sthree-bound lower bound' % label, None, None, '%.1f',
                        ref_why=str(e))
        clock = j['simulated']['clock_mhz'] * 1e6
        batch = j['batch']
        return line(name, batch * clock / cycles, 'inferences/s',
                    '%sthree-bound lower bound, %s-bound' % (label, kind),
                    batch * clock / bound, 'inferences/s', '%.1f')
    if cmd == 'llm':
        return llm(a[0], a[1], a[2], int(a[3]) if len(a) > 3 else None)
    if cmd == 'floor' and len(a) == 4:
        return floor(*a)
    if cmd == 'clusters':
        name, p12, p14 = a
        ips12, ips14 = (json.load(open(p))['simulated']['throughput_ips'] for p in (p12, p14))
        print('%s: %.1f inferences/s (14 clusters: %.1f inferences/s, ratio %.3f)'
              % (name, ips12, ips14, ips12 / ips14))
        return 0
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
