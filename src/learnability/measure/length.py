"""Length generalisation: train on a range of lengths, score accuracy per length bucket beyond it.

A model can generalise in length only if nothing it computes is tied to the training lengths:
- the read-out must sit where it sits at every length: a CLS token (prepended, always position 0) or an
  EOS token (appended). Reading the last *bit* ties the read-out to a position whose code at a test
  length was never seen in training (`LENGTH_INVARIANT_READOUTS`).
- the positional scheme must be defined beyond the training lengths: none, sinusoidal (absolute, any
  length) or ALiBi (relative distance bias); a learned table cannot be read past its rows. With EOS,
  a sinusoidal code still moves with the length, so EOS needs `none` or `alibi`.
`check_length_setup(config)` raises a UserError for a combination that cannot extend.

Training lengths must hold enough distinct strings that memorising them is not an option:
`training_strings(lo, hi, draws)` counts the strings of those lengths and the expected number of
distinct ones a run of `draws` uniformly drawn strings (one length per batch, uniform over lengths) sees.

`bucket_accuracy(model, task, buckets)`: accuracy per bucket "lo-hi", each length weighted equally,
every string of a length enumerated when there are at most `per_length` of them, else `per_length`
uniform draws.

Reference numbers (`REFERENCE`): Hahn & Rofin (2024) has no length experiment. The numbers the project
compares with are quoted in its spec from a later paper of the same group, with a GPT-2-style language
model trained on lengths 0–50 — by its bins and model, Huang, Yang, Bhattamishra, Sarrof, Krebs, Zhou,
Nakkiran & Hahn, "A Formal Framework for Understanding Length Generalization in Transformers" (arXiv
2410.02140, 2024). They are shown for orientation only; they were not re-checked against that paper's
tables, and this study's length experiment is the project's own extension.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.tasks.boolean import bits_of

LENGTH_INVARIANT_READOUTS = ("cls", "eos")
EXTENDABLE_POSITIONS = ("none", "sinusoidal", "alibi")


@dataclass(frozen=True)
class LengthReference:
    source: str
    model: str
    buckets: tuple[str, ...]
    accuracy: dict[str, tuple[float, ...]]


REFERENCE = LengthReference(
    source="Huang et al. 2024 (arXiv 2410.02140), a later paper of Hahn's group, as quoted in the project "
    "spec (not re-checked); Hahn & Rofin 2024 has no length experiment",
    model="GPT-2-style causal LM, trained on lengths 0–50",
    buckets=("0-50", "51-100", "101-150"),
    accuracy={"parity": (1.00, 0.83, 0.62), "majority": (1.00, 0.996, 0.978)},
)


def check_length_setup(model_config: Any) -> None:
    """UserError unless the model's read-out and positions are defined, unchanged, at every length."""
    readout = getattr(model_config, "readout", None)
    positions = getattr(model_config, "positions", None)
    if readout not in LENGTH_INVARIANT_READOUTS:
        raise UserError(
            f"readout={readout!r} is not length-invariant; use one of {', '.join(LENGTH_INVARIANT_READOUTS)} "
            "(a CLS or EOS token is read at the same place at every length)"
        )
    if positions not in EXTENDABLE_POSITIONS:
        raise UserError(
            f"positions={positions!r} cannot be read beyond the training lengths; use one of "
            f"{', '.join(EXTENDABLE_POSITIONS)}"
        )
    if readout == "eos" and positions == "sinusoidal":
        raise UserError(
            "readout='eos' with sinusoidal positions reads a position code that moves with the length; "
            "use readout='cls' or positions 'none' / 'alibi'"
        )


@dataclass(frozen=True)
class TrainingStrings:
    space: int  # strings of the training lengths
    expected_distinct: float  # expected distinct strings among the draws


def training_strings(lo: int, hi: int, draws: int) -> TrainingStrings:
    """Strings of lengths lo..hi, and the expected distinct count among `draws` uniform draws spread evenly
    over the lengths: Σ_L 2^L (1 − (1 − 2^−L)^{draws/(hi − lo + 1)})."""
    if not 1 <= lo <= hi:
        raise UserError(f"training lengths {lo}..{hi} are not allowed; need 1 ≤ lo ≤ hi")
    per_length = draws / (hi - lo + 1)
    space = sum(2**length for length in range(lo, hi + 1))
    distinct = sum(
        2**length * (1 - (1 - 2.0**-length) ** per_length) for length in range(lo, hi + 1)
    )
    return TrainingStrings(space, float(distinct))


@torch.no_grad()
def bucket_accuracy(
    model: nn.Module,
    task: Any,
    buckets: list[list[int]],
    per_length: int = 512,
    seed: int = 0,
    device: torch.device | str = "cpu",
) -> dict[str, Any]:
    """{"buckets": {"lo-hi": accuracy}, "lengths": {L: accuracy}}; `task` gives `make_batch(bits)` and
    `accuracy(output, batch)` at any length (a Boolean task)."""
    device = resolve_device(device)
    g = torch.Generator().manual_seed(seed)
    was = model.training
    model.eval()
    lengths: dict[int, float] = {}
    out: dict[str, float] = {}
    for lo, hi in buckets:
        accs = []
        for length in range(lo, hi + 1):
            if length not in lengths:
                if 2**length <= per_length:
                    bits = bits_of(torch.arange(2**length), length)
                else:
                    bits = torch.randint(0, 2, (per_length, length), generator=g)
                batch = task.make_batch(bits).to(device)
                lengths[length] = float(task.accuracy(model(batch.inputs), batch))
            accs.append(lengths[length])
        out[f"{lo}-{hi}"] = sum(accs) / len(accs)
    model.train(was)
    return {"buckets": out, "lengths": {str(k): v for k, v in sorted(lengths.items())}}


__all__ = [
    "EXTENDABLE_POSITIONS", "LENGTH_INVARIANT_READOUTS", "REFERENCE", "LengthReference", "TrainingStrings",
    "bucket_accuracy", "check_length_setup", "training_strings",
]  # fmt: skip
