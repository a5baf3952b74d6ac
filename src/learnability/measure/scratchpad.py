"""Autoregressive decoding of the prefix-parity scratchpad (`learnability.tasks.scratchpad`).

`generate(model, bits)` starts from x_1 … x_n, SEP and appends, one step at a time, the model's own
thresholded prediction at the last position; after n steps it returns the n predictions ŷ_1 … ŷ_n.
Nothing of the target enters: a mistake at step t is fed back and propagates, exactly as at test time
in the published code. `scratchpad_accuracy` scores the decoded run against the true prefix parities.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.tasks.scratchpad import SEP, prefix_parities


@torch.no_grad()
def generate(
    model: nn.Module, bits: torch.Tensor, threshold: float = 0.5, sep: int = SEP
) -> torch.Tensor:
    """(B, n) input bits → (B, n) long predictions ŷ_t, each step fed the model's previous outputs.

    The model maps tokens (B, T) to one scalar per position (B, T) (or (B,) for the last position).
    """
    b, n = bits.shape
    seq = torch.cat(
        [bits.to(torch.int64), torch.full((b, 1), sep, dtype=torch.int64, device=bits.device)], 1
    )
    was = model.training
    model.eval()
    outputs = []
    for t in range(n):
        out = model(seq)
        last = out if out.dim() == 1 else out[:, -1]  # the prediction for y_{t+1}
        y = (last > threshold).to(torch.int64)
        outputs.append(y)
        if t < n - 1:
            seq = torch.cat([seq, y[:, None]], 1)  # its own output, not the target
    model.train(was)
    return torch.stack(outputs, 1)


@torch.no_grad()
def scratchpad_accuracy(
    model: nn.Module, bits: torch.Tensor, device: torch.device | str = "cpu", chunk: int = 4096
) -> dict[str, Any]:
    """Decoded against the truth on (B, n) strings: final_bit_acc (ŷ_n = PARITY(x)), step_acc (all
    steps), exact (every step right) and per_step (accuracy of each ŷ_t)."""
    device = resolve_device(device)
    preds = []
    for s in range(0, len(bits), chunk):
        preds.append(generate(model, bits[s : s + chunk].to(device)).cpu())
    pred = torch.cat(preds)
    truth = prefix_parities(bits.cpu())
    hit = (pred == truth).float()
    return {
        "final_bit_acc": float(hit[:, -1].mean()),
        "step_acc": float(hit.mean()),
        "exact": float(hit.min(1).values.mean()),
        "per_step": [float(v) for v in hit.mean(0)],
    }


__all__ = ["generate", "scratchpad_accuracy"]
