"""Study `sparse_xor`, sweeps: one job per draw (a seed at one d), so a draw is a record and the
independent unit of every claim."""

from __future__ import annotations

from typing import Any

from learnability.models.two_head import draw_support
from learnability.studies import Plan, Sweep
from learnability.studies.sparse_xor.plan import RIVALS, SUCCESS, Grid, SparseXorParams

S = "sparse_xor"


def grid(g: Grid) -> dict[str, float]:
    return {"lo": g[0], "hi": g[1], "per_decade": g[2]}


def ffnn_base(d: int, steps: int, batch: int = 128) -> dict[str, Any]:
    """A two-layer ReLU MLP on the same task (support of seed 0), trained with the shared Trainer."""
    p, q = draw_support(d, 20_000)
    return {
        # y = −x_i x_j in ±1 is the XOR of the two bits with targets 2·XOR − 1.
        "task": {"name": "boolean", "function": f"x{p} ^ x{q}", "n": d, "targets": "pm1",
                 "mode": "online", "test_size": 2048},
        "model": {"arch": "mlp", "n_inputs": d, "width": 2, "depth": 1, "inputs": "pm1"},
        "train": {"steps": steps, "batch_size": batch, "lr": 3e-3, "weight_decay": 0.0,
                  "eval_every": 100, "converge_loss": SUCCESS.loss / 5},
        "measure": [],
        "save_model": False,
    }  # fmt: skip


def sweeps(plan: Plan[SparseXorParams]) -> list[Sweep]:
    c = plan.params
    n_grid = [2**k for k in range(5, c.n_max_log2 + 1)]
    kinds = ["softmax", *RIVALS]
    out = [
        Sweep(f"{S}/one_step", "sparse_xor.one_step",
              base={"grid": grid(c.c_grid), "grid_unit": "c", "sign_samples": 200},
              grid={"d": list(c.one_step_d)}, seeds=list(range(c.one_step_seeds)), study=S),
        Sweep(f"{S}/kinds", "sparse_xor.one_step",
              base={"grid": grid(c.eta_grid), "grid_unit": "eta"},
              grid={"attention": kinds, "d": list(c.kinds_d)}, seeds=list(range(c.kinds_seeds)), study=S),
        Sweep(f"{S}/many_steps", "sparse_xor.many_steps",
              base={"steps": c.many_steps, "grid": grid(c.many_grid)},
              grid={"attention": kinds, "d": list(c.kinds_d)},
              seeds=list(range(c.many_first_seed, c.many_first_seed + c.many_seeds)), study=S),
        Sweep(f"{S}/min_m", "sparse_xor.min_m", base={"m_grid": list(c.m_grid), "grid": grid(c.m_c_grid)},
              grid={"d": list(c.m_d)}, seeds=list(range(c.m_seeds)), study=S),
        Sweep(f"{S}/samples", "sparse_xor.samples", base={"n_grid": n_grid, "grid": grid(c.c_grid)},
              grid={"d": list(c.samples_d)}, seeds=list(range(c.samples_seeds)), study=S),
    ]  # fmt: skip
    # one sweep per FFNN seed: the seed fixes initialisation and data; width 1 (one ReLU: test MSE ≥ 2/3 on XOR
    # at any budget) may get a shorter budget, `ffnn_floor_steps`
    steps = [c.ffnn_floor_steps or c.ffnn_steps if w == 1 else c.ffnn_steps for w in c.ffnn_widths]
    out += [Sweep(f"{S}/ffnn_d{d}_s{seed}", "train", base={**ffnn_base(d, c.ffnn_steps, c.ffnn_batch), "data_seed": seed},
                  zip={"model.width": list(c.ffnn_widths), "train.steps": steps}, seeds=[seed], study=S)
            for d in c.ffnn_d for seed in range(c.ffnn_first_seed, c.ffnn_first_seed + c.ffnn_seeds)]  # fmt: skip
    return out


__all__ = ["S", "ffnn_base", "grid", "sweeps"]
