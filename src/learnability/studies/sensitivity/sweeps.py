"""Study `sensitivity`, sweeps of the jobs in `learnability.jobs.sensitivity`.

A sweep's `seed` draws both the initial weights and the data stream (the jobs' `data_seed` defaults to it,
as the published code seeds both from one `random_state`); the same seed gives the same initial weights at
every n and for every task of a sweep, so units repeat across n. The published model's layers start as
copies of one layer (`layer_init="copy"`, PyTorch's deep copy) and MAJORITY's ties go to 0 (its `>`).
"""

from __future__ import annotations

import math
from typing import Any

from learnability.studies import Plan, Sweep
from learnability.studies.sensitivity.plan import FIT_LOSS, SensitivityParams

NAME = "sensitivity"


def task_spec(task: str, n: int) -> str:
    """The zoo spec of a scaling task at n ("sparse_half" = sparse parity on ⌈n/2⌉ fixed bits; MAJORITY
    with ties to 0, as published)."""
    if task == "sparse_half":
        return f"sparse_parity:k={math.ceil(n / 2)},seed=0"
    return "majority:ties=0" if task == "majority" else task


# fmt: off
def _model(p: SensitivityParams, **over: Any) -> dict[str, Any]:
    """The published recipe: post-LN (eps 1e-5), 2 layers started as copies of one, 2 heads, ReLU FFN of
    the model width, token ‖ learned position embeddings, scalar read-out at the last position."""
    return {"arch": "boolean_transformer", "d_model": p.d_model, "d_ff": p.d_model, "n_layers": 2,
            "n_heads": 2, "ln": "post", "ln_eps": 1e-5, "embedding": "concat", "positions": "learned",
            "readout": "last", "layer_init": "copy", **over}


def _train(p: SensitivityParams, **over: Any) -> dict[str, Any]:
    """AdamW, constant lr, a fixed number of steps: no early stop (the published budget)."""
    return {"steps": p.budget, "batch_size": p.batch, "lr": p.lr, "weight_decay": p.weight_decay,
            "eval_every": p.eval_every, "converge_loss": None, **over}


def _measured(p: SensitivityParams, task: str, n: int, max_n: int) -> dict[str, Any]:
    return {"task": {"name": "boolean", "function": task_spec(task, n), "n": n, "targets": "01",
                     "mode": "online", "test_size": 1024},
            "model": _model(p, max_len=max_n), "train": _train(p, steps=p.max_steps), "budget": p.budget,
            "after_fit": p.after_fit, "fit_loss": FIT_LOSS, "measure_batch": p.measure_batch,
            "directions": p.directions, "profile_directions": p.profile_directions, "radii": list(p.radii),
            "save_model": False}


def sweeps(plan: Plan[SensitivityParams]) -> list[Sweep]:
    p, top = plan.params, max(plan.params.ns)
    plain = [task_spec(t, 0) for t in p.tasks if t != "sparse_half"]
    # every task at an n shares that n's budget (the same training step is read); an n-only grid when the
    # budget is the same at every n keeps the runs' configs, and so their ids, as before
    by_n: dict[str, Any] = ({"zip": {"task.n": list(p.ns), "budget": [p.budget_of(n) for n in p.ns]}}
                            if p.budget_at else {})
    out = [Sweep(f"{NAME}/scaling", "sensitivity.train", base=_measured(p, "parity", p.ns[0], top),
                 grid={"task.function": plain, **({} if by_n else {"task.n": list(p.ns)})}, seeds=list(p.seeds),
                 **by_n)]
    if "sparse_half" in p.tasks:  # k follows n: the spec and n are zipped
        out.append(Sweep(f"{NAME}/scaling_sparse", "sensitivity.train", base=_measured(p, "parity", p.ns[0], top),
                         zip={"task.function": [task_spec("sparse_half", n) for n in p.ns], "task.n": list(p.ns)},
                         seeds=list(p.seeds)))
    if p.tradeoff_draws:  # each draw (lr, weight decay, init seed) is used at every (task, n), like a seed
        out.append(Sweep(
            f"{NAME}/tradeoff", "sensitivity.train", base=_measured(p, "parity", p.tradeoff_ns[0], top),
            grid={"task.function": plain, "task.n": list(p.tradeoff_ns)},
            random={"train.lr": {"uniform": list(p.tradeoff_lr)},
                    "train.weight_decay": {"uniform": list(p.tradeoff_wd)},
                    "seed": {"int_uniform": [1000, 1_000_000]}},
            samples=p.tradeoff_draws, seeds=[0], seed_key="",
        ))
    out.append(Sweep(f"{NAME}/dynamics", "sensitivity.dynamics",
                     {"function": "parity", "n": p.dyn_n, "model": _model(p, max_len=p.dyn_n), "every": p.dyn_every,
                      "train": _train(p, steps=p.dyn_steps), "probe": p.dyn_probe, "directions": p.dyn_directions},
                     {"train.weight_decay": list(p.dyn_wds)}, seeds=list(p.dyn_seeds)))
    out.append(Sweep(f"{NAME}/generalisation", "sensitivity.generalisation",
                     {"n": p.gen_n, "model": _model(p, max_len=p.gen_n), "completions": p.gen_completions,
                      "train": _train(p, steps=p.gen_steps, batch_size=max(p.gen_sizes), eval_every=p.gen_steps),
                      "refit": _train(p, steps=p.gen_refit_steps, batch_size=2**p.gen_n, eval_every=p.gen_refit_steps),
                      "refits": p.gen_refits, "directions": p.gen_directions},
                     {"train_size": list(p.gen_sizes)}, seeds=list(p.gen_seeds)))
    lo, hi = p.len_train
    longest = max(b[1] for b in p.len_buckets)
    length = {"task": {"name": "boolean", "function": "parity", "n": hi, "min_len": lo, "max_len": hi,
                       "length_buckets": [list(b) for b in p.len_buckets]},
              "model": _model(p, readout="cls", max_len=longest, positions=p.len_positions[0]),
              "train": _train(p, steps=p.len_steps)}
    # FIRST (sensitivity 1, one position: no averaging) beside MAJORITY (low sensitivity, an average): issue 34
    grid = {"task.function": ["parity", "majority:ties=0", "first"]}
    out.append(Sweep(f"{NAME}/length", "sensitivity.length", length, grid, seeds=list(p.len_seeds)))
    if p.len_positions[1:]:
        out.append(Sweep(f"{NAME}/length_alt", "sensitivity.length", length,
                         {**grid, "model.positions": list(p.len_positions[1:])}, seeds=list(p.len_alt_seeds)))
    pad = {"model": _model(p, d_model=p.pad_d_model, d_ff=p.pad_d_model, max_len=2 * max((p.pad_n, *p.pad_curve_ns))),
           "train": _train(p, steps=p.pad_steps, batch_size=p.pad_batch)}
    out.append(Sweep(f"{NAME}/scratchpad", "sensitivity.scratchpad", {**pad, "n": p.pad_n},
                     {"mode": ["autoregressive", "plain"]}, seeds=list(p.pad_seeds)))
    if p.pad_curve_ns:  # Fig. 11's other n (no rule reads them; none at the quick scale since issue 36)
        out.append(Sweep(f"{NAME}/scratchpad_curve", "sensitivity.scratchpad", {**pad, "mode": "autoregressive"},
                         {"n": list(p.pad_curve_ns)}, seeds=list(p.pad_curve_seeds)))
    return out

# fmt: on
