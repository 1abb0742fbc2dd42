#!/usr/bin/env python3
"""first_run.py - drives a knobwise worker (README, "The worker protocol")
over every knob value the CUDA worker accepts, on regular and ragged shapes,
and writes one CSV row per request: what it asked, and whether the worker
answered ok (its own fp64 check passed: src/worker/kw_worker_cuda.cu checks
every request before timing it) or an error with its reason.

Usage: first_run.py WORKER_CMD > requests.csv   (exit 1 when any answer is
wrong_result, internal, missing or unparsable; unsupported is expected for
the values the worker refuses by design and counts as a refusal, not a
failure). Written for tests/cuda/first_run.sh, the CUDA worker's first run on
a GPU; it speaks only the protocol, so `first_run.py ./knobwise-worker` runs
the same requests on the CPU worker (how it was checked without a GPU).

Requests: for each shape, each GEMM knob value one at a time from the
baseline (tile_m, tile_n 16..128, tile_k 8..64, split_k 1..4, fuse_epilogue,
precision), then 24 random combinations (random.Random(20261205)); the same
for attention (fuse_attention none|qk_softmax|flash, tile_n, precision,
causal, grouped KV heads).
"""
import random
import subprocess
import sys

GEMM_KNOBS = {
    "fc.tile_m": ["16", "32", "64", "128"],
    "fc.tile_n": ["16", "32", "64", "128"],
    "fc.tile_k": ["8", "16", "32", "64"],
    "fc.split_k": ["1", "2", "4"],
    "fuse_epilogue": ["off", "on"],
    "precision": ["fp32", "bf16"],
}
GEMM_BASE = {"fc.tile_m": "64", "fc.tile_n": "64", "fc.tile_k": "32", "fc.split_k": "1",
             "fuse_epilogue": "off", "precision": "fp32"}
ATTN_KNOBS = {
    "fuse_attention": ["none", "qk_softmax", "flash"],
    "attn.tile_n": ["16", "32", "64", "128"],
    "precision": ["fp32", "bf16"],
}
ATTN_BASE = {"fuse_attention": "none", "attn.tile_n": "64", "precision": "fp32"}

# (name, phase, batch, seq, kv_len): regular and ragged (no dimension a tile multiple)
SHAPES = [
    ("prefill_b2_s128", "prefill", 2, 128, 0),
    ("decode_b16", "decode", 16, 1, 0),
    ("prefill_ragged_b3_s77", "prefill", 3, 77, 0),
    ("decode_ragged_b5_kv333", "decode", 5, 1, 333),
]
GEMMS = [("n:768,k:512,epilogue:1", "regular"), ("n:200,k:300,epilogue:1", "ragged")]
ATTNS = ["heads:8,kv_heads:8,head_dim:64,causal:0", "heads:8,kv_heads:2,head_dim:64,causal:1"]


def combos(base, knobs, n_random, rng):
    """The baseline, each other value of each knob alone, then n_random draws."""
    out = [dict(base)]
    for k, vals in knobs.items():
        out += [dict(base, **{k: v}) for v in vals if v != base[k]]
    return out + [{k: rng.choice(v) for k, v in knobs.items()} for _ in range(n_random)]


def plans():
    rng = random.Random(20261205)
    for name, phase, batch, seq, kv in SHAPES:
        kvl = kv if kv else 256
        head = f"shape={name} block=first_run phase={phase} batch={batch} seq={seq} kv_len={kvl} streams=1"
        for spec, tag in GEMMS:
            for c in combos(GEMM_BASE, GEMM_KNOBS, 24, rng):
                yield head, f"op.fc=gemm,{spec}", c, f"gemm_{tag}"
        if phase == "decode" and not kv:
            continue  # attention: the prefill shapes and the ragged decode
        for spec in ATTNS:
            for c in combos(ATTN_BASE, ATTN_KNOBS, 8, rng):
                yield head, f"op.attn=attention,{spec}", c, "attention"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: first_run.py WORKER_CMD")
    w = subprocess.Popen(sys.argv[1], shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
    w.stdin.write("hello protocol=1\n")
    w.stdin.flush()
    ready = w.stdout.readline().strip()
    print(f"# {ready}")
    if not ready.startswith("ready protocol=1"):
        print(f"worker did not start: {ready!r}", file=sys.stderr)
        return 1
    print("id,shape,op,knobs,answer,reason,median_us,message")
    bad = counts = 0
    tally = {}
    for i, (head, op, knobs, kind) in enumerate(plans(), 1):
        kt = " ".join(f"knob.{k}={v}" for k, v in knobs.items())
        w.stdin.write(f"measure id={i} {head} warmup=1 reps=3 rep=0 round=0 purpose=search {op} {kt}\n")
        w.stdin.flush()
        ans = w.stdout.readline().strip()
        toks = ans.split(" ")
        med, reason, msg = "", "", ""
        if toks[0] == "ok" and f"id={i}" in toks:
            s = [float(x) for t in toks if t.startswith("samples_us=") for x in t[11:].split(",")]
            med = f"{sorted(s)[len(s) // 2]:.3f}" if s else ""
            status = "ok" if s else "bad"
        elif toks[0] == "error":
            reason = next((t[7:] for t in toks if t.startswith("reason=")), "")
            msg = ans.split("message=", 1)[1] if "message=" in ans else ""
            status = "unsupported" if reason == "unsupported" else "bad"
        else:
            status, msg = "bad", ans or "no answer (worker exited)"
        bad += status == "bad"
        counts += 1
        tally[(kind, status)] = tally.get((kind, status), 0) + 1
        shape = head.split(" ")[0][6:]
        knob_txt = ";".join(f"{k}={v}" for k, v in knobs.items())
        msg = msg.replace('"', "'")
        print(f'{i},{shape},"{op[3:]}",{knob_txt},{status},{reason},{med},"{msg}"')
        if not ans:
            break
    w.stdin.write("quit\n")
    w.stdin.close()
    w.wait(timeout=60)
    for (kind, status), n in sorted(tally.items()):
        print(f"# {kind} {status} {n}")
    print(f"# {counts} requests, {bad} failed (wrong_result, internal, missing or unparsable)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
