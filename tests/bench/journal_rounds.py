#!/usr/bin/python3
"""journal_rounds.py - where a one-knob search's evaluations go, from its journal.

Reads one journal (a run folder's `journal`, or one the growth bench kept:
`KW_BENCH_KEEP=1 tests/bench/bench --only growth` names them on stderr) and
counts its evaluations (E records, repetition 0) by the kind of round that
evaluated them. Each evaluation is given to the first step (T record) after it
whose config id is its own: the step that judged it. The kind comes from that
step's phase and its reason (`why`): main sweep, pilot, compose, probe pairs,
the restart's pairs, tie pairs and triples, the path rounds (stepping stone,
faded composes, fusion pairs), tabu excursion (phase explore), fix. It also
counts the ones after the shape's last improvement (the last ACCEPT that beat
every earlier one). For the probe pairs it splits them by the two knobs' kinds
(knob names with a '.' belong to the op block before it; the others to none):
two knobs of one block, of two blocks, a block-less knob with a block's, two
block-less knobs; by probe list (one per local optimum probed); and, for each pair
taken, how many evaluations its list had spent when it was found (a per-list cap
below that loses the pair).

Usage: journal_rounds.py JOURNAL
"""
import collections
import sys
import urllib.parse


def fields(line):
    return dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)


def block(name):
    return name.rsplit('.', 1)[0] if '.' in name else None


def pair_class(a, b):
    ba, bb = block(a), block(b)
    if ba and bb:
        return 'one block' if ba == bb else 'two blocks'
    return 'block-less x block' if ba or bb else 'two block-less'


def kind(step):
    ph, why = step['phase'], step['why']
    if ph == 'main':
        for tag in ('pilot', 'compose'):
            if why.startswith(tag):
                return 'main: ' + tag
        return 'main: sweep'
    if ph == 'probe':
        for tag in ('restart pair', 'tie triple', 'tie pair', 'stone', 'faded', 'fusion'):
            if tag in why:
                return 'probe: ' + tag
        return 'probe: pairs'
    return {'explore': 'tabu excursion'}.get(ph, ph)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    evals, steps = [], []
    with open(sys.argv[1]) as f:
        for ln, line in enumerate(f):
            if line.startswith('E '):
                e = fields(line)
                if e.get('rep', '0') == '0':
                    evals.append((ln, int(e['s']), e['id']))
            elif line.startswith('T '):
                t = fields(line)
                t['why'] = urllib.parse.unquote(t.get('why', ''))
                t['ln'], t['s'] = ln, int(t['s'])
                t['after'] = float(t.get('after', 'nan'))
                steps.append(t)
    by_id = collections.defaultdict(list)
    for t in steps:
        by_id[(t['s'], t['id'])].append(t)
    last_gain, best = {}, {}
    for t in steps:
        s = t['s']
        if t['d'] == 'accept' and t['after'] == t['after'] and (s not in best or t['after'] < best[s]):
            best[s], last_gain[s] = t['after'], t['ln']
    judge = collections.Counter()  # judging step's line: evaluations it judged
    count, late = collections.Counter(), collections.Counter()
    for ln, s, i in evals:
        t = next((x for x in by_id.get((s, i), []) if x['ln'] > ln), None)
        k = kind(t) if t else 'not judged'
        if t:
            judge[t['ln']] += 1
        count[k] += 1
        late[k] += ln > last_gain.get(s, float('inf'))
    total = sum(count.values())
    print(f'{total} evaluations, {sum(late.values())} after their shape\'s last improvement\n')
    print('| round kind | evaluations | share | after the last improvement |\n|---|---|---|---|')
    for k, v in count.most_common():
        print(f'| {k} | {v} | {100.0 * v / total:.1f}% | {late[k]} |')
    first, pairs, lists, gains = {}, collections.Counter(), collections.Counter(), collections.Counter()
    wins = []  # (shape, evaluations of its probe list up to and with the winning pair's round)
    for t in steps:
        s = t['s']
        if t['phase'] == 'probe' and t['d'] == 'explore' and t['why'].startswith('probe: first step'):
            first[s] = t
            continue
        n = judge.get(t['ln'], 0)
        if n and kind(t) == 'probe: pairs' and s in first:
            c = pair_class(first[s]['knob'], t['knob'])
            pairs[c] += n
            lists[(s, first[s]['parent'])] += n
            gains[c] += t['d'] == 'accept'
        if kind(t) == 'probe: pairs' and t['d'] == 'accept' and s in first:
            wins.append((s, lists[(s, first[s]['parent'])]))
    print('\n| probe pairs: the two knobs | evaluations | pairs taken |\n|---|---|---|')
    for c, v in pairs.most_common():
        print(f'| {c} | {v} | {gains[c]} |')
    per_shape = collections.defaultdict(list)
    for (s, _), v in lists.items():
        per_shape[s].append(v)
    print('\nprobe lists (local optima probed) per shape, evaluations each:')
    for s in sorted(per_shape):
        print(f'  shape {s}: {len(per_shape[s])}: {sorted(per_shape[s], reverse=True)}')
    print('\npairs taken: evaluations of their probe list up to and with the winning round:')
    for s in sorted({w[0] for w in wins}):
        print(f'  shape {s}: {[n for t, n in wins if t == s]}')


if __name__ == '__main__':
    main()
