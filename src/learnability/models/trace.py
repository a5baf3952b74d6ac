"""`Trace`: what a forward pass with `trace=True` records for the measurements.

Shapes use B = batch, T = sequence length (including any EOS/CLS token the model adds), D = width,
H = heads. Tensors are *not* detached: call the model under `torch.no_grad()` when only reading them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor


@dataclass
class Trace:
    """Everything the measurements read from one forward pass.

    - `ln_inputs[k]`: (B, T, D) input of the k-th LayerNorm met in the forward pass (in order).
    - `ln_normalisers[k]`: (B, T) the normaliser 1/√(var + eps) that LayerNorm applied per position
      (biased variance, as in `torch.nn.LayerNorm`). For a zero-variance row with eps = 0 the normaliser
      is undefined; the LayerNorm then applies 0 (its output is its bias), records 0 here and counts the
      row in `degenerate`.
    - `ln_names[k]`: the LayerNorm's module name (`layers.0.ln1`, ..., `final_ln`).
    - `attentions[l]`: (B, H, T, T) softmax attention weights of layer l (rows = queries).
    - `hidden`: (B, T, D) residual stream after the embedding and after each layer (`n_layers + 1` items;
      the final LayerNorm, if any, is not applied to the last item).
    - `degenerate`: number of (row, LayerNorm) pairs met with var + eps == 0 (only possible with eps = 0).
    """

    ln_inputs: list[Tensor] = field(default_factory=list)
    ln_normalisers: list[Tensor] = field(default_factory=list)
    ln_names: list[str] = field(default_factory=list)
    attentions: list[Tensor] = field(default_factory=list)
    hidden: list[Tensor] = field(default_factory=list)
    degenerate: int = 0
