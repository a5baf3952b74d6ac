"""LayerNorm blowup (docs/studies/sensitivity.md, "Measurements"), in both definitions, read from a model's `Trace`.

N_w^(k)(x) is the normaliser 1/√(var + eps) that LayerNorm k applied at position w on input x
(`Trace.ln_normalisers[k]`, (B, T)).

- kind="paper" (Hahn & Rofin's definition): Blowup(x) = Π_k max_w (1 + N_w^(k)(x)), over every LayerNorm and
  every position.
- kind="published" (their released code): Π_k max_w 1/std_w^(k)(x), where std is the Bessel-corrected (n−1)
  standard deviation of the LayerNorm's input over the width, eps and gain ignored, and for the LayerNorms of
  the last layer (and a final LayerNorm) only the read-out position w counts (only it reaches the output).
  A zero-variance row gives 1/std = inf there (the published code would too).

Both report the mean and max over the given inputs; `per_input` holds Blowup(x) for each input.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import check_choice


@dataclass
class Blowup:
    kind: str
    mean: float
    max: float
    per_input: torch.Tensor  # (B,)
    degenerate: int  # zero-variance LayerNorm rows met (eps = 0)

    def summary(self) -> dict[str, float]:
        return {"mean": self.mean, "max": self.max, "degenerate": self.degenerate}


def readout_position(model: nn.Module) -> int:
    """Position whose output the model reads: 0 for a CLS read-out, else the last (−1)."""
    config = getattr(model, "config", None)
    return 0 if getattr(config, "readout", "last") == "cls" else -1


def _last_layer_names(names: list[str]) -> set[str]:
    layers = [
        int(n.split(".")[1]) for n in names if n.startswith("layers.") and n.split(".")[1].isdigit()
    ]
    last = max(layers) if layers else None
    return {
        n
        for n in names
        if n == "final_ln" or (last is not None and n.startswith(f"layers.{last}."))
    }


@torch.no_grad()
def layernorm_blowup(
    model: nn.Module,
    inputs: torch.Tensor,
    kind: str = "paper",
    device: torch.device | str = "cpu",
    chunk: int = 8192,
    read_position: int | None = None,
) -> Blowup:
    """Blowup of `model` on `inputs` (B, T) long tokens; see the module docstring for the two kinds."""
    check_choice("blowup kind", kind, ["paper", "published"])
    device = resolve_device(device)
    read = readout_position(model) if read_position is None else read_position
    was = model.training
    model.eval()
    parts, degenerate = [], 0
    for s in range(0, len(inputs), chunk):
        _, trace = model(inputs[s : s + chunk].to(device), trace=True)
        degenerate += trace.degenerate
        last = _last_layer_names(trace.ln_names)
        blow = torch.ones(
            trace.ln_normalisers[0].shape[0]
            if trace.ln_normalisers
            else len(inputs[s : s + chunk]),
            dtype=torch.float64,
            device=device,
        )
        for name, norm, x in zip(trace.ln_names, trace.ln_normalisers, trace.ln_inputs):
            if kind == "paper":
                blow = blow * (1 + norm.double()).amax(1)
            else:
                std = x.double().std(-1)  # (B, T), Bessel-corrected
                inv = torch.where(std > 0, 1 / std, torch.full_like(std, float("inf")))
                if name in last and inv.shape[1] > 1:
                    inv = inv[:, read : read + 1] if read != -1 else inv[:, -1:]
                blow = blow * inv.amax(1)
        parts.append(blow)
    model.train(was)
    per = torch.cat(parts)
    return Blowup(kind, per.mean().item(), per.max().item(), per.float().cpu(), degenerate)


__all__ = ["Blowup", "layernorm_blowup", "readout_position"]
