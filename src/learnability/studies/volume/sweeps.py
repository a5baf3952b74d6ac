"""Study `volume`, sweeps: `trained/s{seed}` (the shared `train` job, first so the long runs start early),
`random/L{L}D{D}/{variant}` (fresh random recognisers per N), `bound/L{L}D{D}` (Theorem 4.5 cells at eps = 0),
`lengths` (the same weights across N), `control` (uniformly random functions). A random sweep's seed names
a batch of `models` models per cell: one more seed adds that many units."""

from __future__ import annotations

from typing import Any

from learnability.studies import Plan, Sweep
from learnability.studies.volume.plan import DRAWN_SCHEMES, INIT_SCHEMES, VARIANTS, VolumeParams

STUDY = "volume"
RANDOM, BOUND, LENGTHS, CONTROL, TRAINED = "random", "bound", "lengths", "control", "trained"


# fmt: off
def random_names(p: VolumeParams, variant: str = "project") -> tuple[str, ...]:  # a claim's `replicate`
    return tuple(f"{RANDOM}/L{depth}D{width}/{variant}" for depth, width in p.archs)


def bound_names(p: VolumeParams) -> tuple[str, ...]:
    return tuple(f"{BOUND}/L{depth}D{width}" for depth, width in p.bound_archs)


def sweeps(plan: Plan[VolumeParams]) -> list[Sweep]:
    p = plan.params
    common = {"heads": 2, "margins": list(p.margins), "control_draws": p.control_draws}
    out = trained_sweeps(p)
    for depth, width in p.archs:
        for variant, settings in VARIANTS.items():
            # Xavier schemes already keep LayerNorm 1/0 and zero biases: `drawn` would repeat them
            inits = DRAWN_SCHEMES if variant == "drawn" else INIT_SCHEMES
            models = p.models if variant == "project" else p.variant_models
            eps = p.eps if variant == "project" or p.variant_eps is None else p.variant_eps
            out.append(Sweep(
                f"{STUDY}/{RANDOM}/L{depth}D{width}/{variant}", "volume.random_profiles",
                {**common, "depth": depth, "width": width, "models": models, "eps": list(eps), **settings},
                {"n": list(p.ns), "init": list(inits)}, seeds=[p.seed],
            ))
    for depth, width in p.bound_archs:
        out.append(Sweep(
            f"{STUDY}/{BOUND}/L{depth}D{width}", "volume.random_profiles",
            {**common, "depth": depth, "width": width, "models": p.bound_models, "eps": [0.0], **VARIANTS["project"]},
            {"n": list(p.bound_ns), "init": list(INIT_SCHEMES)}, seeds=[p.seed + 1],
        ))
    depth, width = p.length_arch
    out.append(Sweep(
        f"{STUDY}/{LENGTHS}", "volume.length_profiles",
        {"heads": 2, "control_draws": p.control_draws, "depth": depth, "width": width, "models": p.length_models,
         "ns": list(p.length_ns),
         "eps": list(p.length_eps), "directions": p.directions, **VARIANTS["project"]},
        {"init": list(INIT_SCHEMES)}, seeds=[p.length_seed],
    ))
    out.append(Sweep(f"{STUDY}/{CONTROL}", "volume.random_functions", {"count": p.control_count},
                     {"n": sorted(set(p.ns) | set(p.bound_ns))}, seeds=[0]))
    return out


def trained_sweeps(p: VolumeParams) -> list[Sweep]:
    model: dict[str, Any] = {
        "arch": "boolean_transformer", "readout": "eos", "ln": "post", "ln_eps": 1e-5,
        "embedding": "add", "positions": "learned", "max_len": max(p.trained_ns), **p.trained_model,
    }
    # one sweep per seed so the init seed and the data seed move together
    return [Sweep(f"{STUDY}/{TRAINED}/s{seed}", "train", seeds=[seed],
                  base={"task": {"name": "boolean", "targets": "pm1", "mode": "online"}, "model": model,
                        "train": dict(p.trained_train), "measure": ["profile"], "keep_history": True,
                        "save_model": False, "data_seed": seed},
                  grid={"task.function": list(p.trained_functions), "task.n": list(p.trained_ns)})
            for seed in p.trained_seeds]

# fmt: on

__all__ = ["BOUND", "CONTROL", "LENGTHS", "RANDOM", "TRAINED", "bound_names", "random_names", "sweeps",
           "trained_sweeps"]  # fmt: skip
