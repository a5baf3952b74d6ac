"""Study `random`: the sweeps of a plan (all runs are job `random.run`).

| sweep | what | claim |
|---|---|---|
| `random/acc-<task>` | random (embedding-only) models at `random_widths` × seeds | solves-*, width-matters, subspace |
| `random/full-<task>` | fully trained baselines at `full_widths` × seeds (the sanity gate) | solves-* |
| `random/lstm-<task>` | LSTMs at `lstm_widths`, first seed | table only |
| `random/ablation-<task>` | which embedding matrices train, at the task's widest width | ablation |
| `random/memorise` | random and fully trained, published token format | memorisation |
| `random/lm-random`, `lm-full`, `lm-depth` | KJV language modelling | language |
| `random/circuit` | target width × {random, full} student | circuit |

The slowest sweeps come first, so the two workers of a quick run finish together.
"""

from __future__ import annotations

from typing import Any

from learnability.studies.base import Plan
from learnability.studies.random_transformers.plans import ABLATIONS, RandomParams
from learnability.sweep.spec import Sweep

JOB = "random.run"


def _gpt(p: RandomParams, width: int, layers: int | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "arch": "gpt",
        "d_model": width,
        "n_layers": layers or p.n_layers,
        "n_heads": p.n_heads,
        "unembedding_bias": False,
        **extra,
    }


def _lstm(p: RandomParams, width: int) -> dict[str, Any]:
    return {"arch": "lstm", "d_model": width, "n_layers": p.lstm_layers}


def sweeps(plan: Plan[RandomParams]) -> list[Sweep]:
    p = plan.params
    seeds = list(p.seeds)
    probe = {"probe_rows": p.probe_rows, "subspace_k": list(p.subspace_k)}
    out: list[Sweep] = []
    for name, t in p.tasks.items():
        probes = [
            "subspace",
            *{"needle": ["attention"], "mod_add": ["embedding_pcs"]}.get(name, []),
        ]
        out.append(
            Sweep(
                f"random/acc-{name}",
                JOB,
                base={
                    "task": dict(t.config),
                    "model": _gpt(p, t.wide),
                    "probes": probes,
                    "train": t.random.train("embeddings"),
                    **probe,
                },
                grid={"model.d_model": sorted(t.random_widths, reverse=True)},
                seeds=seeds,
            )
        )
        out.append(
            Sweep(
                f"random/full-{name}",
                JOB,
                base={
                    "task": dict(t.config),
                    "model": _gpt(p, max(t.full_widths)),
                    "probes": probes,
                    "train": t.full.train("full"),
                    **probe,
                },
                grid={"model.d_model": list(t.full_widths)},
                seeds=seeds,
            )
        )
        out.append(
            Sweep(
                f"random/lstm-{name}",
                JOB,
                base={
                    "task": dict(t.config),
                    "model": _lstm(p, t.lstm_widths[0]),
                    "train": t.lstm.train("full"),
                },
                grid={"model.d_model": list(t.lstm_widths)},
                seeds=seeds[:1],
            )
        )
        if name in p.ablation_tasks:
            out.append(
                Sweep(
                    f"random/ablation-{name}",
                    JOB,
                    base={
                        "task": dict(t.config),
                        "model": _gpt(p, t.wide),
                        "train": t.random.train("embeddings"),
                    },
                    grid={"train.freeze": list(ABLATIONS.values())},
                    seeds=list(p.ablation_seeds),
                )
            )
    seeds = list(p.other_seeds or p.seeds)
    m = p.memorise
    out.append(
        Sweep(
            "random/memorise",
            JOB,
            base={
                "task": dict(m.config),
                "model": _gpt(p, m.width),
                "train": m.random.train("embeddings"),
            },
            grid={"train": [m.random.train("embeddings"), m.full.train("full")]},
            seeds=seeds,
        )
    )
    lm = p.language
    lm_base = {"task": dict(lm.config), "probes": ["samples", "subspace"], **probe}
    out.append(
        Sweep(
            "random/lm-random",
            JOB,
            base={
                **lm_base,
                "model": _gpt(p, lm.random_width, dropout=lm.dropout),
                "train": lm.random.train("embeddings"),
            },
            seeds=seeds,
        )
    )
    out.append(
        Sweep(
            "random/lm-full",
            JOB,
            base={
                **lm_base,
                "model": _gpt(p, lm.full_widths[0], dropout=lm.dropout),
                "train": lm.full.train("full"),
            },
            grid={"model.d_model": list(lm.full_widths)},
            seeds=seeds,
        )
    )
    if lm.depth_layers:
        out.append(
            Sweep(
                "random/lm-depth",
                JOB,
                base={
                    **lm_base,
                    "model": _gpt(p, lm.random_width, lm.depth_layers, dropout=lm.dropout),
                },
                grid={"train": [lm.random.train("embeddings"), lm.full.train("full")]},
                seeds=seeds[:1],
            )
        )
    c = p.circuit
    out.append(
        Sweep(
            "random/circuit",
            JOB,
            base={
                "task": dict(c.config),
                "model": {"arch": "gpt", "unembedding_bias": False, **c.student},
                "train": c.random.train("embeddings"),
            },
            grid={
                "task.target_width": list(c.targets),
                "train": [c.random.train("embeddings"), c.full.train("full")],
            },
            seeds=seeds,
        )
    )
    return out


__all__ = ["JOB", "sweeps"]
