"""GPT-2 decoder of the Zhong & Andreas recipe (docs/studies/random.md).

Pre-LN blocks, tanh-GELU MLP of width 4D, learned absolute positions, untied `unembedding`, causal,
dropout 0 and LayerNorm eps 1e-5 by default. Init: N(0, 0.02) for every matrix and embedding except the
attention and MLP output projections (`attn.out_proj`, `mlp.proj`) at N(0, 0.02/√(2·n_layers)); zero
biases; LayerNorm gain 1, bias 0. `init` picks another scheme by the names every model kind uses
(`learnability.models.init`: pytorch, uniform, gaussian, Xavier); `token_scale="sqrt_d"` multiplies
the token embedding by √d_model in the forward.

tokens (B, T) long -> logits (B, T, V). With trace=True also a `Trace` (hidden = residual stream after
the embedding and after each layer, attention maps, every LayerNorm's input and normaliser).
`run(tokens)` is the untraced forward without the input check, for any leading dims of a stacked
ensemble (`learnability.sweep.ensemble`): tokens (K, B, T) with every parameter stacked (K, ...).

Frozen parameters (embedding-only training) cost nothing beyond the input gradient: Linear and
LayerNorm backward compute only the gradients that are asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, cast

import torch
from torch import Tensor, nn

from learnability.config import HASH_OMIT_DEFAULT
from learnability.errors import UserError, check_choice
from learnability.models.init import (
    TOKEN_SCALES,
    check_init,
    pytorch_init,
    scheme_init,
    token_factor,
)
from learnability.models.layers import (
    Block,
    BlockConfig,
    Embedding,
    LayerNorm,
    Linear,
    check_tokens,
)
from learnability.models.trace import Trace


@dataclass
class GPTConfig:
    """Shape and init of a `GPT` (Zhong & Andreas defaults: dropout 0, eps 1e-5, std 0.02)."""

    arch: Literal["gpt"] = "gpt"  # a GPT-2 style causal decoder
    vocab_size: int = 256  # tokens (the task's vocabulary must fit)
    max_len: int = 64  # longest sequence (rows of the learned position table)
    n_layers: int = 2  # decoder blocks
    n_heads: int = 2  # attention heads per block (must divide d_model)
    d_model: int = 128  # width of the residual stream
    d_ff: int | None = None  # None = 4 * d_model
    dropout: float = 0.0  # dropout probability (0 = none)
    ln_eps: float = 1e-5  # LayerNorm epsilon
    init_std: float = 0.02  # σ of the normal initialisation of every weight matrix
    # GPT-2's `lm_head` has no bias (Zhong & Andreas); True keeps this project's earlier unembedding
    unembedding_bias: bool = True
    # initialisation scheme, as every model kind names them (`learnability.models.init`): default is
    # GPT-2's (init_std above), pytorch PyTorch's module defaults, uniform / gaussian of scale
    # init_scale, Xavier. Not in run ids at default, nor are init_scale and token_scale
    init: Literal[
        "default", "pytorch", "uniform", "gaussian", "xavier_uniform", "xavier_normal"
    ] = field(default="default", metadata=HASH_OMIT_DEFAULT)
    # B of uniform [-B, B] / σ of gaussian
    init_scale: float = field(default=10.0, metadata=HASH_OMIT_DEFAULT)
    # "sqrt_d": the token embedding times √d_model in the forward (Bhattamishra et al.'s code)
    token_scale: Literal["none", "sqrt_d"] = field(default="none", metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise a one-line UserError for an inconsistent configuration."""
        for name in ("vocab_size", "max_len", "n_layers", "n_heads", "d_model"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"{name}={value!r} is not allowed; it must be a positive integer")
        if self.d_ff is not None and (not isinstance(self.d_ff, int) or self.d_ff < 1):
            raise UserError(
                f"d_ff={self.d_ff!r} is not allowed; it must be a positive integer or None (= 4·d_model)"
            )
        if self.d_model % self.n_heads:
            raise UserError(
                f"n_heads={self.n_heads} does not divide d_model={self.d_model}; pick a divisor of the width"
            )
        if not self.ln_eps >= 0 or math.isinf(self.ln_eps):
            raise UserError(
                f"ln_eps={self.ln_eps!r} is not allowed; it must be a finite number >= 0"
            )
        if not 0 <= self.dropout < 1:
            raise UserError(f"dropout={self.dropout!r} is not allowed; it must be in [0, 1)")
        if not self.init_std > 0:
            raise UserError(f"init_std={self.init_std!r} is not allowed; it must be > 0")
        check_init(self.init, self.init_scale)
        check_choice("token_scale", self.token_scale, TOKEN_SCALES)


class GPT(nn.Module):
    """tokens (B, T) -> logits (B, T, V)."""

    def __init__(self, config: GPTConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        config.validate()
        self.config = c = config
        d_ff = c.d_ff or 4 * c.d_model
        self.token_embedding = Embedding(c.vocab_size, c.d_model)
        self.token_factor = token_factor(c.token_scale, c.d_model)  # None: unscaled
        self.position_embedding = Embedding(c.max_len, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        # GPT-2: pre-LN, tanh-GELU MLP, causal attention
        block = BlockConfig(
            c.d_model, c.n_heads, d_ff, "gelu_tanh", c.dropout, "pre", c.ln_eps, True
        )
        self.layers = nn.ModuleList(Block(block, i) for i in range(c.n_layers))
        self.final_ln = LayerNorm(c.d_model, c.ln_eps, "final_ln")
        self.unembedding = Linear(c.d_model, c.vocab_size, bias=c.unembedding_bias)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """The configured init (`init`; default GPT-2's, module docstring), from `generator` (global
        RNG if None). Every scheme is drawn after GPT-2's, as the Boolean transformer draws its
        schemes after its default."""
        c = self.config
        if c.init == "pytorch":
            pytorch_init(self, generator)
            return
        self._gpt2_init(generator)
        if c.init != "default":
            scheme_init(self, c.init, c.init_scale, generator)

    def _gpt2_init(self, generator: torch.Generator | None) -> None:
        c = self.config
        out_std = c.init_std / math.sqrt(2 * c.n_layers)
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = (
                    out_std
                    if name.endswith(("attn.out_proj.weight", "mlp.proj.weight"))
                    else c.init_std
                )
                nn.init.normal_(p, 0.0, std, generator=generator)
            elif name.endswith(("ln1.weight", "ln2.weight", "final_ln.weight")):
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)

    def positional_parameter_names(self) -> set[str]:
        return {"position_embedding.weight"}

    def _check(self, tokens: Tensor) -> None:
        check_tokens(tokens, self.config.vocab_size, self.config.max_len)

    def forward(
        self, tokens: Tensor, trace: bool = False, at: Tensor | None = None
    ) -> Tensor | tuple[Tensor, Trace]:
        """tokens (B, T) long -> logits (B, T, V); with trace=True also a Trace; with `at` (P,)
        long the logits at those positions only, (B, P, V) (see `run`)."""
        self._check(tokens)
        if not trace:
            return self.run(tokens, at)
        if at is not None:
            raise ValueError("at= and trace=True do not combine: a trace holds every position")
        rec = Trace()
        x = self._embed(tokens)
        rec.hidden.append(x)
        for block in self.layers:
            x = block(x, rec)
            rec.hidden.append(x)
        return self.unembedding(self.final_ln(x, rec)), rec

    def _embed(self, tokens: Tensor) -> Tensor:
        t = tokens.shape[-1]
        pos = self.position_embedding.weight[..., :t, :].unsqueeze(-3)  # (..., 1, T, D)
        x = self.token_embedding(tokens)  # (..., B, T, D)
        if self.token_factor is not None:
            x = x * self.token_factor
        return self.drop(x + pos)  # (..., B, T, D)

    def run(self, tokens: Tensor, at: Tensor | None = None) -> Tensor:
        """The untraced forward without the input check: tokens (..., T) -> logits (..., T, V), or
        with `at` (P,) long the logits at those positions only, (..., P, V): the last block asks only
        those queries (a loss that reads a few positions needs nothing else of it), the same numbers
        as the full forward's rows up to rounding."""
        x = self._embed(tokens)
        last = len(self.layers) - 1
        for i, block in enumerate(self.layers):
            x = block(x, at=at) if i == last else block(x)  # (..., T or P, D)
        return cast(Tensor, self.unembedding(self.final_ln(x)))
