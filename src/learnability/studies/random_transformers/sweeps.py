"""Study `random`, sweeps: the sweeps of a plan (all runs are job `random.run`).

| sweep | what | claim |
|---|---|---|
| `random/acc-<task>` | random (embedding-only) models at `random_widths` × seeds | solves-*, width-matters, subspace |
| `random/full-<task>` | fully trained baselines at `full_widths` × baseline seeds (the sanity gate) | solves-* |
| `random/lstm-<task>` | LSTMs at `lstm_widths` (when any), first seed, gated like the baselines | table only |
| `random/ablation-<task>` | which embedding matrices train, at the task's widest width | ablation |
| `random/memorise` | random and fully trained, published token format | memorisation |
| `random/lm-random`, `lm-full` | KJV language modelling (when the plan has it) | language |
| `random/circuit` | target width × {random, full} student | circuit |
"""

from __future__ import annotations

from typing import Any

from learnability.studies import Plan, Sweep
from learnability.studies.random_transformers.plan import ABLATIONS, RandomParams, task_seeds

JOB = "random.run"


def _gpt(p: RandomParams, width: int, layers: int | None = None, heads: int | None = None, **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"arch": "gpt", "d_model": width, "n_layers": layers or p.n_layers, "n_heads": heads or p.n_heads,
            "unembedding_bias": False, **extra}  # fmt: skip


def sweeps(plan: Plan[RandomParams]) -> list[Sweep]:
    p = plan.params
    baseline = list(p.baseline_seeds or p.seeds)
    probe = {"probe_rows": p.probe_rows, "subspace_k": list(p.subspace_k)}
    out: list[Sweep] = []
    for name, t in p.tasks.items():
        task, seeds = dict(t.config), list(task_seeds(p, name))
        probes = ["subspace", *{"needle": ["attention"], "mod_add": ["embedding_pcs"]}.get(name, [])]  # fmt: skip
        out += [
            Sweep(f"random/acc-{name}", JOB, seeds=seeds, grid={"model.d_model": sorted(t.random_widths, reverse=True)},
                  base={"task": task, "model": _gpt(p, t.wide), "probes": probes,
                        "train": t.random.train("embeddings"), **probe}),
            Sweep(f"random/full-{name}", JOB, seeds=baseline, grid={"model.d_model": list(t.full_widths)},
                  base={"task": task, "model": _gpt(p, max(t.full_widths)), "probes": probes,
                        "train": t.full.train("full"), **probe}),
        ]  # fmt: skip
        if t.lstm_widths and t.lstm is not None:
            out.append(Sweep(f"random/lstm-{name}", JOB, seeds=seeds[:1], grid={"model.d_model": list(t.lstm_widths)},
                             base={"task": task, "model": {"arch": "lstm", "d_model": t.lstm_widths[0],
                                                           "n_layers": p.lstm_layers}, "train": t.lstm.train("full")}))  # fmt: skip
        if name in p.ablation_tasks:
            out.append(Sweep(f"random/ablation-{name}", JOB, seeds=list(p.ablation_seeds),
                             base={"task": task, "model": _gpt(p, t.wide), "train": t.random.train("embeddings")},
                             grid={"train.freeze": list(ABLATIONS.values())}))  # fmt: skip
    seeds = list(p.other_seeds or p.seeds)
    m, lm, c = p.memorise, p.language, p.circuit
    # first: its fully trained seeds train as one long group on one worker, and the short runs fill the other
    out.insert(0, Sweep("random/memorise", JOB, seeds=seeds, grid={"train": [m.random.train("embeddings"), m.full.train("full")]},
                        base={"task": dict(m.config), "model": _gpt(p, m.width), "train": m.random.train("embeddings")}))  # fmt: skip
    if lm is not None:
        base = {"task": dict(lm.config), "probes": ["samples", "subspace"], **probe}
        model = _gpt(p, lm.random_width, lm.n_layers, lm.n_heads, dropout=lm.dropout)
        out += [
            Sweep("random/lm-random", JOB, seeds=seeds, base={**base, "model": model, "train": lm.random.train("embeddings")}),
            Sweep("random/lm-full", JOB, seeds=seeds, grid={"model.d_model": list(lm.full_widths)},
                  base={**base, "model": {**model, "d_model": lm.full_widths[0]}, "train": lm.full.train("full")}),
        ]  # fmt: skip
    out.append(Sweep("random/circuit", JOB, seeds=list(p.circuit_seeds or seeds),
                     base={"task": dict(c.config), "model": {"arch": "gpt", "unembedding_bias": False, **c.student},
                           "train": c.random.train("embeddings")},
                     grid={"task.target_width": list(c.targets),
                           "train": [c.random.train("embeddings"), c.full.train("full")]}))  # fmt: skip
    return out
