"""In-place ops per zoo model and capture route (checked-in profiles: profiles/ = aot,
profiles/eager/ = eager), by phase, aten op and what they write.

    python bench/inplace_counts.py > results/eager-capture/inplace_ops.md
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODELS = ["resnet50", "unet", "densenet121", "inception-v3", "bert-large", "gpt3-2.7b", "swin-t", "bilstm"]


def written(g, t: int) -> str:
    """What an in-place output overwrites: the kind of the storage's first tensor."""
    root = g.tensors[g.storage_root[t]]
    if root.producer is None:
        return {"param": "parameter", "buffer": "buffer", "optimizer_state": "optimizer state",
                "input": "batch"}.get(root.kind, root.kind)
    op = g.ops[root.producer]
    if op.meta.get("running_stats"):
        return "running-stats copy"
    return "optimizer state" if op.meta.get("phase") == "opt" else "activation"


def counts(g) -> Counter:
    c: Counter = Counter()
    for o in g.ops:
        if o.mutated:
            c[(o.meta.get("phase", "?"), o.target.replace("aten.", ""), written(g, o.mutated[0]))] += 1
    return c


def main() -> None:
    from planner.models import load_model
    print("| model | route | ops | in-place ops | fwd+bwd in-place | in-place ops by phase, op, what they write |")
    print("|---|---|---:|---:|---:|---|")
    for m in MODELS:
        for route, name in (("aot", m), ("eager", f"eager/{m}")):
            g = load_model(name)
            c = counts(g)
            fb = sum(v for (ph, _, _), v in c.items() if ph != "opt")
            kinds = "; ".join(f"{ph} {op} -> {w}: {v}" for (ph, op, w), v in sorted(c.items()))
            print(f"| {m} | {route} | {len(g.ops)} | {sum(c.values())} | {fb} | {kinds} |")


if __name__ == "__main__":
    main()
