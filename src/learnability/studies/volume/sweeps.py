"""Study `volume`, sweeps. Sweep names (the prefix `volume/` added by the store):

- `trained/s{seed}`: the shared `train` job on PARITY, 3-sparse parity, FIRST, MAJORITY (first, so
  the long training runs start while the random profiles fill the other workers),
- `random/L{L}D{D}/{variant}`: fresh random recognisers per N (`volume.random_profiles`),
- `bound/L{L}D{D}`: Theorem 4.5 cells at eps = 0,
- `lengths`: the same weights across N (`volume.length_profiles`),
- `control`: uniformly random functions per N (`volume.random_functions`).
"""

from __future__ import annotations

from typing import Any

from learnability.studies import Plan, Sweep
from learnability.studies.volume.plan import (
    DRAWN_SCHEMES,
    INIT_SCHEMES,
    TRAINED_FUNCTIONS,
    VARIANTS,
    VolumeParams,
)

STUDY = "volume"
RANDOM, BOUND, LENGTHS, CONTROL, TRAINED = "random", "bound", "lengths", "control", "trained"


def _name(*parts: str) -> str:
    return "/".join((STUDY, *parts))


def sweeps(plan: Plan[VolumeParams]) -> list[Sweep]:
    p = plan.params
    out = trained_sweeps(p)
    for depth, width in p.archs:
        for variant, settings in VARIANTS.items():
            # Xavier schemes already keep LayerNorm 1/0 and zero biases: the variant would repeat them
            inits = INIT_SCHEMES if variant == "public" else DRAWN_SCHEMES
            out.append(Sweep(
                name=_name(RANDOM, f"L{depth}D{width}", variant), job="volume.random_profiles",
                base={"depth": depth, "width": width, "heads": 2, "models": p.models,
                      "eps": list(p.eps), "margins": list(p.margins),
                      "control_draws": p.control_draws, **settings},
                grid={"n": list(p.ns), "init": list(inits)}, seeds=[0],
            ))  # fmt: skip
    for depth, width in p.bound_archs:
        out.append(Sweep(
            name=_name(BOUND, f"L{depth}D{width}"), job="volume.random_profiles",
            base={"depth": depth, "width": width, "heads": 2, "models": p.bound_models, "eps": [0.0],
                  "margins": list(p.margins), "control_draws": p.control_draws,
                  **VARIANTS["public"]},
            grid={"n": list(p.bound_ns), "init": list(INIT_SCHEMES)}, seeds=[1],
        ))  # fmt: skip
    depth, width = p.length_arch
    out.append(Sweep(
        name=_name(LENGTHS), job="volume.length_profiles",
        base={"depth": depth, "width": width, "heads": 2, "models": p.length_models,
              "ns": list(p.length_ns), "eps": list(p.length_eps), "directions": p.directions,
              "control_draws": p.control_draws, **VARIANTS["public"]},
        grid={"init": list(INIT_SCHEMES)}, seeds=[2],
    ))  # fmt: skip
    out.append(Sweep(
        name=_name(CONTROL), job="volume.random_functions", base={"count": p.control_count},
        grid={"n": sorted(set(p.ns) | set(p.bound_ns))}, seeds=[0],
    ))  # fmt: skip
    return out


def trained_sweeps(p: VolumeParams) -> list[Sweep]:
    model: dict[str, Any] = {
        "arch": "boolean_transformer", "readout": "eos", "ln": "post", "ln_eps": 1e-5,
        "embedding": "add", "positions": "learned", "max_len": max(p.trained_ns), **p.trained_model,
    }  # fmt: skip
    # one sweep per seed so the init seed and the data seed move together
    return [Sweep(_name(TRAINED, f"s{seed}"), "train", seeds=[seed],
                  base={"task": {"name": "boolean", "targets": "pm1", "mode": "online"}, "model": model,
                        "train": dict(p.trained_train), "measure": ["profile"], "keep_history": True,
                        "save_model": False, "data_seed": seed},
                  grid={"task.function": list(TRAINED_FUNCTIONS), "task.n": list(p.trained_ns)})
            for seed in p.trained_seeds]  # fmt: skip


__all__ = ["BOUND", "CONTROL", "LENGTHS", "RANDOM", "TRAINED", "sweeps", "trained_sweeps"]
