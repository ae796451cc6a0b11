# SPDX-License-Identifier: MIT
"""Check an npu-run --trace file against the same run's --profile --json.

usage: trace_check.py TRACE.json SUMMARY.json

The summary's counters come from the device core's performance registers,
which the cycle model fills independently of the spans the trace records:
the spans must add up to them.  Prints one line per failed check and
"N passed, N failed" last; exits 1 if any check failed.
"""
import json
import sys
from collections import defaultdict

UNITS = ('tcu', 'cvu', 'dtdu', 'csu')

passed = 0
failed = 0


def check(name, cond, detail=''):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print('FAIL: %s%s' % (name, (': ' + detail) if detail else ''))


def main(trace_path, summary_path):
    trace = json.load(open(trace_path, encoding='utf-8'))
    summ = json.load(open(summary_path))
    prof = summ['profile']
    mhz = summ['device']['clock_mhz']
    meta = trace['otherData']
    events = trace['traceEvents']

    check('clock in the metadata', meta['clock_mhz'] == mhz,
          '%s vs %s' % (meta['clock_mhz'], mhz))
    steps = sorted((e for e in events if e['ph'] == 'X' and e['pid'] == 1),
                   key=lambda e: e['args']['step'])
    spans = [e for e in events if e['ph'] == 'X' and e['pid'] != 1]
    check('spans recorded', len(spans) > 0 and len(spans) == meta['spans'],
          '%d spans, metadata says %d' % (len(spans), meta['spans']))

    # Steps: one per profiled step, same labels and cycles, laid end to end.
    check('step count', len(steps) == len(prof['steps']),
          '%d vs %d' % (len(steps), len(prof['steps'])))
    at = 0
    for i, (t, p) in enumerate(zip(steps, prof['steps'])):
        a = t['args']
        check('step %d label' % i, t['name'] == (p['label'] or 'step %d' % i),
              '%r vs %r' % (t['name'], p['label']))
        check('step %d cycles' % i, a['device_cycles'] == p['cycles'],
              '%d vs %d' % (a['device_cycles'], p['cycles']))
        check('step %d host' % i, (t['cat'] == 'host') == p['host'])
        if not p['host']:
            check('step %d length' % i, a['cycles'] == p['cycles'])
        check('step %d starts where the last ended' % i, a['cycle'] == at,
              '%d vs %d' % (a['cycle'], at))
        at = a['cycle'] + a['cycles']
    check('device cycles', sum(s['args']['device_cycles'] for s in steps) ==
          prof['total_cycles'])

    # Every span: inside its step, ts/dur its cycles at the clock.
    outside = [s for s in spans
               if not (steps[s['args']['step']]['args']['cycle'] <= s['args']['cycle'] and
                       s['args']['cycle'] + s['args']['cycles'] <=
                       steps[s['args']['step']]['args']['cycle'] +
                       steps[s['args']['step']]['args']['cycles'])]
    check('every span inside its step', not outside,
          '%d outside, first %r' % (len(outside), outside[:1]))
    mistimed = [s for s in spans
                if abs(s['ts'] - s['args']['cycle'] / mhz) > 1e-5 or
                abs(s['dur'] - s['args']['cycles'] / mhz) > 1e-5]
    check('ts and dur are the cycles at the clock', not mistimed, repr(mistimed[:1]))

    # Spans on one track (one unit of one TPB, one DMA engine) never overlap.
    tracks = defaultdict(list)
    for s in spans:
        tracks[(s['pid'], s['tid'])].append((s['args']['cycle'], s['args']['cycles']))
    overlaps = 0
    for k, v in tracks.items():
        v.sort()
        overlaps += sum(1 for a, b in zip(v, v[1:]) if a[0] + a[1] > b[0])
    check('spans on one unit never overlap', overlaps == 0, '%d overlaps' % overlaps)

    # Per cluster and unit: busy cycles, HBSM conflicts.
    busy = defaultdict(int)
    conflicts = defaultdict(int)
    gsdu = 0
    dma_bytes = defaultdict(int)
    dma_spans = defaultdict(int)
    for s in spans:
        a = s['args']
        gsdu += a.get('gsdu_bytes', 0)
        if a['unit'] == 'DMA':
            dma_bytes[a['engine']] += a['dma_bytes']
            dma_spans[a['engine']] += 1
            continue
        busy[(a['cluster'], a['unit'].lower())] += a['cycles']
        conflicts[a['cluster']] += a['conflicts']
    clusters = {c['cluster']: c for c in prof['clusters']}
    traced = {c for c, _ in busy}
    check('traced clusters are profiled', traced <= set(clusters),
          'traced %s, profiled %s' % (sorted(traced), sorted(clusters)))
    for c, pc in sorted(clusters.items()):
        for u in UNITS:
            check('cluster %d %s busy cycles' % (c, u),
                  busy[(c, u)] == pc['unit_busy_cycles'][u],
                  'spans %d, counter %d' % (busy[(c, u)], pc['unit_busy_cycles'][u]))
        check('cluster %d HBSM conflicts' % c, conflicts[c] == pc['hbsm_conflicts'],
              'spans %d, counter %d' % (conflicts[c], pc['hbsm_conflicts']))
    for d in prof['dma']:
        e = d['engine']
        check('DMA engine %d bytes' % e, dma_bytes[e] == d['bytes'],
              'spans %d, counter %d' % (dma_bytes[e], d['bytes']))
        check('DMA engine %d has spans iff it moved bytes' % e,
              (dma_spans[e] > 0) == (d['bytes'] > 0))
    check('GSDU bytes', gsdu == prof['gsdu_bytes'], '%d vs %d' % (gsdu, prof['gsdu_bytes']))

    # NoC: the hottest links' bytes match the counters; their busy % is a share.
    plinks = {l['link']: l['bytes'] for l in prof['hottest_links']}
    hot = meta['hot_links']
    check('hot links recorded', len(hot) > 0 or not plinks)
    common = [l for l in hot if l['link'] in plinks]
    check('hot links shared with the profile', len(common) > 0 or not plinks)
    for l in common:
        check('link %d bytes' % l['link'], l['bytes'] == plinks[l['link']],
              '%d vs %d' % (l['bytes'], plinks[l['link']]))
    counters = [e for e in events if e['ph'] == 'C']
    link_names = {e['name'] for e in counters if e['pid'] == 3}
    check('a counter track per hot link', len(link_names) == len(hot),
          '%d tracks, %d links' % (len(link_names), len(hot)))
    bad = [e for e in counters if e['pid'] == 3 and not 0 <= e['args']['busy %'] <= 100]
    check('link busy within 0..100%', not bad, repr(bad[:1]))
    conf = sum(e['args']['conflicts'] for e in counters if e['name'] == 'HBSM conflicts')
    check('conflict counters sum to the conflicts', conf == sum(conflicts.values()),
          '%d vs %d' % (conf, sum(conflicts.values())))

    # Every track is named.
    named = {(e['pid'], e['tid']) for e in events
             if e['ph'] == 'M' and e['name'] == 'thread_name'}
    check('every span track is named', set(tracks) <= named,
          'unnamed %s' % sorted(set(tracks) - named)[:3])

    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
