"""Study `sensitivity`, sweeps: seven sweeps of the jobs in `learnability.jobs.sensitivity`.

A sweep's `seed` is the initialisation seed; the data stream (`data_seed`) is fixed per cell, so the same
seed means the same initial weights at every n and for every task of a sweep (units repeat across n).
"""

from __future__ import annotations

import math
from typing import Any

from learnability.studies import Plan, Sweep
from learnability.studies.sensitivity.plan import FIT_LOSS, SensitivityParams

NAME = "sensitivity"


def task_spec(task: str, n: int) -> str:
    """The zoo spec of a scaling task at n ("sparse_half" = sparse parity on ⌈n/2⌉ fixed bits)."""
    return f"sparse_parity:k={math.ceil(n / 2)},seed=0" if task == "sparse_half" else task


def _model(p: SensitivityParams, **over: Any) -> dict[str, Any]:
    """The published recipe: post-LN (eps 1e-5), 2 layers, 2 heads, ReLU FFN of the model width,
    token ‖ learned position embeddings, scalar read-out at the last position."""
    return {"arch": "boolean_transformer", "d_model": p.d_model, "d_ff": p.d_model, "n_layers": 2,
            "n_heads": 2, "ln": "post", "ln_eps": 1e-5, "embedding": "concat", "positions": "learned",
            "readout": "last", **over}  # fmt: skip


def _train(p: SensitivityParams, **over: Any) -> dict[str, Any]:
    """AdamW, constant lr, a fixed number of steps: no early stop (the published budget)."""
    return {"steps": p.steps, "batch_size": p.batch, "lr": p.lr, "weight_decay": p.weight_decay,
            "eval_every": p.eval_every, "converge_loss": None, **over}  # fmt: skip


def _measured(p: SensitivityParams, task: str, n: int, max_n: int) -> dict[str, Any]:
    return {"task": {"name": "boolean", "function": task_spec(task, n), "n": n, "targets": "01",
                     "mode": "online", "test_size": 1024},
            "model": _model(p, max_len=max_n), "train": _train(p), "fit_loss": FIT_LOSS,
            "measure_batch": p.measure_batch, "directions": p.directions, "radii": list(p.radii)}  # fmt: skip


def sweeps(plan: Plan[SensitivityParams]) -> list[Sweep]:
    p = plan.params
    plain = [t for t in p.tasks if t != "sparse_half"]
    out = [Sweep(f"{NAME}/scaling", "sensitivity.train", base=_measured(p, "parity", p.ns[0], max(p.ns)),
                 grid={"task.function": plain, "task.n": list(p.ns)}, seeds=list(p.seeds))]  # fmt: skip
    if "sparse_half" in p.tasks:  # k follows n: one sweep of the same name per n
        out += [Sweep(f"{NAME}/scaling", "sensitivity.train", base=_measured(p, "sparse_half", n, max(p.ns)),
                      seeds=list(p.seeds)) for n in p.ns]  # fmt: skip
    # trade-off: each draw (lr, weight decay, init seed) is used at every (task, n), like a scaling seed
    out.append(Sweep(
        f"{NAME}/tradeoff", "sensitivity.train", base=_measured(p, "parity", p.tradeoff_ns[0], max(p.ns)),
        grid={"task.function": list(p.tradeoff_tasks), "task.n": list(p.tradeoff_ns)},
        random={"train.lr": {"uniform": list(p.tradeoff_lr)},
                "train.weight_decay": {"uniform": list(p.tradeoff_wd)},
                "seed": {"int_uniform": [1000, 1_000_000]}},
        samples=p.tradeoff_draws, seeds=[0], seed_key="",
    ))  # fmt: skip
    out.append(Sweep(
        f"{NAME}/dynamics", "sensitivity.dynamics",
        base={"function": "parity", "n": p.dyn_n, "model": _model(p, max_len=p.dyn_n),
              "train": _train(p, steps=p.dyn_steps), "every": p.dyn_every, "probe": p.dyn_probe,
              "directions": p.dyn_directions},
        grid={"train.weight_decay": list(p.dyn_wds)}, seeds=list(p.dyn_seeds),
    ))  # fmt: skip
    full = 2**p.gen_n
    out.append(Sweep(
        f"{NAME}/generalisation", "sensitivity.generalisation",
        base={"n": p.gen_n, "model": _model(p, max_len=p.gen_n),
              "train": _train(p, steps=p.gen_steps, batch_size=max(p.gen_sizes), eval_every=p.gen_steps),
              "refit": _train(p, steps=p.gen_refit_steps, batch_size=full, eval_every=p.gen_refit_steps),
              "completions": p.gen_completions, "refits": p.gen_refits, "directions": p.directions},
        grid={"train_size": list(p.gen_sizes)}, seeds=list(p.gen_functions), seed_key="function_seed",
    ))  # fmt: skip
    lo, hi = p.len_train
    longest = max(b[1] for b in p.len_buckets)
    out.append(Sweep(
        f"{NAME}/length", "sensitivity.length",
        base={"task": {"name": "boolean", "function": "parity", "n": hi, "min_len": lo, "max_len": hi,
                       "length_buckets": [list(b) for b in p.len_buckets]},
              "model": _model(p, readout=p.len_readout, max_len=longest),
              "train": _train(p, steps=p.len_steps)},
        grid={"task.function": ["parity", "majority"], "model.positions": list(p.len_positions)},
        seeds=list(p.len_seeds),
    ))  # fmt: skip
    out.append(Sweep(
        f"{NAME}/scratchpad", "sensitivity.scratchpad",
        base={"model": _model(p, d_model=p.pad_d_model, d_ff=p.pad_d_model, max_len=2 * max(p.pad_ns)),
              "train": _train(p, steps=p.pad_steps, batch_size=p.pad_batch)},
        grid={"n": list(p.pad_ns), "mode": ["autoregressive", "plain"]}, seeds=list(p.pad_seeds),
    ))  # fmt: skip
    return out


__all__ = ["NAME", "sweeps", "task_spec"]
