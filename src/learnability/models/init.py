"""Initialisation schemes every model kind shares, by the same config fields (`init`, `init_scale`).

| `init` | what every parameter gets |
|---|---|
| `default` | the model's own initialisation: PyTorch's for the Boolean transformer, LSTM and MLP, GPT-2's N(0, `init_std`) for the GPT |
| `pytorch` | PyTorch's module defaults (Linear kaiming-uniform, Embedding N(0, 1), LSTM U(±1/√H), LayerNorm 1 / 0); the same as `default` except for the GPT, so it is stored as `default` elsewhere |
| `uniform` | U[−B, B], B = `init_scale`, for *every* parameter (LayerNorm gains and biases included) |
| `gaussian` | N(0, σ²), σ = `init_scale`, for every parameter |
| `xavier_uniform` / `xavier_normal` | Xavier (Glorot) for every matrix, embeddings included, with fused matrices taken block by block (attention q / k / v, an LSTM's four gates): Var = 2 / (fan_in + fan_out) of the block; biases 0, LayerNorm gains 1 |

A scheme other than `default` is drawn *after* the model's own initialisation, from the same generator,
so a model's default stream is what it always was (the Boolean transformer's schemes were drawn so
before they were shared).

`token_scale="sqrt_d"` multiplies the token embedding by √d_model in the forward, as the code of
Bhattamishra et al. (2023, `TransformerCLF`: `self.encoder(src) * sqrt(d_model)`) does; the volume
study's `embedding_init="cited"` bakes the same factor into its random models' weights. At
initialisation the two give the same function; in training the forward factor also scales the
embedding's gradient by √d_model, as in that code. Positional embeddings are not scaled.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from learnability.errors import UserError, check_choice
from learnability.models.layers import LayerNorm, SelfAttention, default_init

INITS = ("default", "pytorch", "uniform", "gaussian", "xavier_uniform", "xavier_normal")
TOKEN_SCALES = ("none", "sqrt_d")


def check_init(init: str, scale: float) -> None:
    """One-line UserError for an init scheme or scale a model cannot draw."""
    check_choice("init scheme", init, INITS)
    if not scale > 0 or math.isinf(scale):
        raise UserError(f"init_scale={scale!r} is not allowed; it must be a finite number > 0")


def token_factor(token_scale: str, d_model: int) -> float | None:
    """The factor the forward multiplies token embeddings by (None: leave them as they are)."""
    return math.sqrt(d_model) if token_scale == "sqrt_d" else None


def _fused_blocks(model: nn.Module) -> dict[int, int]:
    """{id(weight): number of stacked blocks} of the fused matrices Xavier takes block by block."""
    out: dict[int, int] = {}
    for module in model.modules():
        if isinstance(module, SelfAttention):
            out[id(module.in_proj.weight)] = 3  # rows q | k | v
        elif isinstance(module, nn.LSTM):
            for name, p in module.named_parameters():
                if name.startswith("weight_"):
                    out[id(p)] = 4  # rows i | f | g | o
    return out


@torch.no_grad()
def scheme_init(
    model: nn.Module, scheme: str, scale: float, generator: torch.Generator | None
) -> None:
    """Redraw every parameter of `model` by `scheme` (module docstring) from `generator`, in
    `named_parameters` order; `default` / `pytorch` are the caller's and are not handled here."""
    gains = {id(m.weight) for m in model.modules() if isinstance(m, (LayerNorm, nn.LayerNorm))}
    fused = _fused_blocks(model)
    for p in model.parameters():
        if scheme == "uniform":
            nn.init.uniform_(p, -scale, scale, generator=generator)
        elif scheme == "gaussian":
            nn.init.normal_(p, 0.0, scale, generator=generator)
        elif scheme in ("xavier_uniform", "xavier_normal"):
            if p.dim() < 2:
                if id(p) in gains:
                    nn.init.ones_(p)
                else:
                    nn.init.zeros_(p)
                continue
            xavier = (
                nn.init.xavier_uniform_ if scheme == "xavier_uniform" else nn.init.xavier_normal_
            )
            block: Tensor
            for block in p.data.chunk(fused.get(id(p), 1)):
                xavier(block, generator=generator)
        else:
            raise ValueError(f"scheme_init does not draw {scheme!r}")


def pytorch_init(model: nn.Module, generator: torch.Generator | None) -> None:
    """PyTorch's module defaults for every module of `model`, drawn from `generator`."""
    default_init(model, generator)
    for module in model.modules():
        if isinstance(module, nn.LSTM):
            bound = 1 / math.sqrt(module.hidden_size)
            for p in module.parameters():
                nn.init.uniform_(p, -bound, bound, generator=generator)


__all__ = ["INITS", "TOKEN_SCALES", "check_init", "pytorch_init", "scheme_init", "token_factor"]
