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

With --growth, reads the growth bench's stderr (`KW_BENCH_KEEP=1
tests/bench/bench --only growth 2>LOG`) and accounts every kept journal by knob
count, per shape and mean over the seeds: the first round (the baseline's
neighbours the screen let through), the later main sweeps (split by what changed
since the knob's last sweep: its own op block, a block-less knob, only other op
blocks; and rounds of a block-less knob), pilot and compose, probe pairs by
probe list (1st, 2nd, 3rd, later), the other probe rounds, the explore walks by
what started them (tabu excursion, relink, restart), fix; then the main steps
accepted, the local optima probed and the evaluations per local optimum per knob
value (flat when the growth is linear in the knob values). Beside each count, in
brackets, the evaluations whose metrics, guards and status repeat, bit for bit, an
evaluation the shape had already made: a service measured again under another
config (the model is deterministic, so only an identical service repeats them all).

Usage: journal_rounds.py JOURNAL
       journal_rounds.py --growth BENCH_STDERR
"""
import collections
import re
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


def read(path, repeats=None, aliases=None):
    """E records (line, shape, id; repetition 0), T records, configs by id, knob names;
    repeats (a set, when given) gets the (shape, id) of each evaluation whose metrics,
    guards and status repeat an earlier evaluation of its shape bit for bit; aliases (a set,
    when given) the (shape, id) of each alias (`a=`: no full evaluation, issue 18)."""
    evals, steps, cfg, names, services = [], [], {}, {}, set()
    with open(path) as f:
        for ln, line in enumerate(f):
            if line.startswith('K '):
                k = fields(line)
                names[int(k['i'])] = k['name']
            elif line.startswith('E '):
                e = fields(line)
                cfg[e['id']] = e['c'].split('.')
                if e.get('rep', '0') == '0':
                    evals.append((ln, int(e['s']), e['id']))
                    if aliases is not None and 'a' in e:
                        aliases.add((int(e['s']), e['id']))
                    service = (e['s'], e.get('rc'), e.get('m'), e.get('g'))
                    if repeats is not None and service in services:
                        repeats.add((int(e['s']), e['id']))
                    services.add(service)
            elif line.startswith('T '):
                t = fields(line)
                t['why'] = urllib.parse.unquote(t.get('why', ''))
                t['ln'], t['s'] = ln, int(t['s'])
                steps.append(t)
    return evals, steps, cfg, names


def sweep_class(kn, before, now, names):
    """A later main sweep of knob kn: what changed since its last sweep."""
    if block(kn) is None:
        return 'later sweeps: a block-less knob'
    ch = [names[i] for i in range(len(now)) if before[i] != now[i]]
    if any(block(c) == block(kn) for c in ch):
        return "later sweeps: its block's knobs changed"
    if any(block(c) is None for c in ch):
        return 'later sweeps: a block-less knob changed'
    return 'later sweeps: only other op blocks changed'


def growth_one(path, acc):
    """Adds one journal's evaluations by phase to acc (a Counter)."""
    repeats, aliases = set(), set()
    evals, steps, cfg, names = read(path, repeats, aliases)
    by_id = collections.defaultdict(list)
    for t in steps:
        by_id[(t['s'], t['id'])].append(t)
    judged = {}  # T line -> phase label of the evaluations it judged
    base, first_acc, walk, listno, cur = {}, {}, {}, collections.defaultdict(dict), {}
    last_sweep, rnd, prev_phase = {}, {}, {}
    for t in steps:
        s = t['s']
        base.setdefault(s, t['parent'])
        k = kind(t)
        if t['phase'] == 'main' and t['d'] == 'accept':
            acc['main steps accepted'] += 1
            first_acc.setdefault(s, t['ln'])
        if k == 'main: sweep':
            if t['parent'] == base[s] and t['ln'] <= first_acc.get(s, float('inf')):
                label = 'first round'
            else:
                key = (s, t['parent'], t['knob'])
                if key not in rnd:
                    prev = last_sweep.get((s, t['knob']))
                    rnd[key] = ('later sweeps: first of the knob' if prev is None or prev not in cfg
                                or t['parent'] not in cfg
                                else sweep_class(t['knob'], cfg[prev], cfg[t['parent']], names))
                label = rnd[key]
            last_sweep[(s, t['knob'])] = t['parent']
        elif k == 'probe: pairs':
            if t['why'].startswith('probe: first step') and t['d'] == 'explore':
                if t['parent'] not in listno[s]:
                    listno[s][t['parent']] = len(listno[s]) + 1
                    acc['local optima probed'] += 1
                cur[s] = min(listno[s][t['parent']], 4)
            label = 'probe pairs, list ' + ('4 and later' if cur.get(s) == 4 else str(cur.get(s, 1)))
        elif k.startswith('probe: '):
            label = 'probe: tie/restart/faded/stone/fusion'
        elif k == 'tabu excursion':
            if t['d'] == 'explore':
                w = t['why']
                walk[s] = ('walk: relink' if w.startswith('relink') else 'walk: restart'
                           if w.startswith('restart') else 'walk: tabu excursion')
                acc[walk[s] + ' (walks)'] += prev_phase.get(s) != 'explore'
            label = walk.get(s, 'walk: tabu excursion')
        else:
            label = k
        judged[t['ln']] = label
        if t['d'] not in ('reject', 'constraint'):
            prev_phase[s] = t['phase']  # a walk starts at an explore step after another phase's move
    acc['shapes'] += len(base)
    for ln, s, i in evals:
        t = next((x for x in by_id.get((s, i), []) if x['ln'] > ln), None)
        label = judged[t['ln']] if t else 'not judged'
        acc[label] += 1
        acc['total'] += 1
        if (s, i) in repeats:
            acc[label, 'repeat'] += 1
            acc['total', 'repeat'] += 1
        if (s, i) in aliases:
            acc[label, 'alias'] += 1
            acc['total', 'alias'] += 1


def growth(log):
    rows = collections.defaultdict(collections.Counter)
    values = {}
    for line in open(log):
        m = re.search(r'journal kept: (\S*journal\.knobs(\d+)\.seed\d+\.\d+)', line)
        if m:
            growth_one(m.group(1), rows[int(m.group(2))])
            if int(m.group(2)) not in values:
                with open(m.group(1)) as f:
                    values[int(m.group(2))] = sum(len(fields(x)['values'].split(','))
                                                  for x in f if x.startswith('K '))
    ks = sorted(rows)
    if not ks:
        sys.exit('no kept journals named in ' + log)
    order = ['first round', 'later sweeps: first of the knob', "later sweeps: its block's knobs changed",
             'later sweeps: a block-less knob changed', 'later sweeps: only other op blocks changed',
             'later sweeps: a block-less knob', 'main: pilot', 'main: compose', 'probe pairs, list 1',
             'probe pairs, list 2', 'probe pairs, list 3', 'probe pairs, list 4 and later',
             'probe: tie/restart/faded/stone/fusion', 'walk: tabu excursion', 'walk: relink',
             'walk: restart', 'fix', 'settle', 'backtrack', 'not judged']
    seen = set().union(*[set(r) for r in rows.values()])
    extra = sorted(x for x in seen - set(order) if isinstance(x, str) and not x.endswith('(walks)')
                   and x not in ('total', 'shapes', 'main steps accepted', 'local optima probed'))
    print('candidates judged per shape (mean over the seeds) by the phase that judged them; in')
    print('brackets, those whose metrics and guards repeat a service the shape had measured, bit for')
    print('bit, then the aliases among them (journal `a=`: judged on the earlier evaluation, no full')
    print('evaluation); full evaluations are the first figure less the aliases\n')
    print('| phase | ' + ' | '.join(f'{k} knobs ({values[k]} values)' for k in ks) + ' |')
    print('|---|' + '---|' * len(ks))
    for lab in order + extra + ['total']:
        if any(rows[k][lab] for k in ks):
            print(f'| {lab} | ' + ' | '.join(f'{rows[k][lab] / rows[k]["shapes"]:.1f} '
                                           f'({rows[k][lab, "repeat"] / rows[k]["shapes"]:.1f}, '
                                           f'{rows[k][lab, "alias"] / rows[k]["shapes"]:.1f})'
                                           for k in ks) + ' |')
    for lab in ('main steps accepted', 'local optima probed', 'walk: tabu excursion (walks)',
                'walk: relink (walks)', 'walk: restart (walks)'):
        print(f'| {lab} | ' + ' | '.join(f'{rows[k][lab] / rows[k]["shapes"]:.2f}' for k in ks) + ' |')
    print('| evaluations per local optimum probed per knob value | ' + ' | '.join(
        f'{rows[k]["total"] / max(1, rows[k]["local optima probed"]) / values[k]:.2f}' for k in ks) + ' |')


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--growth':
        growth(sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    evals, steps = [], []
    with open(sys.argv[1]) as f:
        for ln, line in enumerate(f):
            if line.startswith('E '):
                e = fields(line)
                if e.get('rep', '0') == '0':
                    evals.append((ln, int(e['s']), e['id']))
                    if aliases is not None and 'a' in e:
                        aliases.add((int(e['s']), e['id']))
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
