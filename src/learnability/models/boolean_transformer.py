"""The Boolean-string transformer: Hahn & Rofin's published recipe and Kövér et al.'s recogniser.

Input: bits (B, n) as tokens 0 / 1 (any `vocab_size`), position k holding x_k. Output: one scalar per
string (B,), or one per position (B, n) with `readout="all"` (scratchpad targets).

Embedding: `concat` = token embedding (width D/2) ‖ position embedding (width D/2), as published;
`add` = both of width D, summed. With `positions="none"` the token embedding has the full width D.
Positions: `learned` (a table of `max_len` rows (+1 for EOS/CLS); longer inputs are refused with a
UserError), `sinusoidal` (fixed sin/cos of Vaswani et al., computed for any length: the length-agnostic
scheme for length generalisation), `alibi` (no position embedding; every attention score gets the
distance bias −m_h·|i − j| of Press et al. 2022, slopes m_h = 2^(−8h/H): relative, defined for any
length), or `none`.
Readout: `last` position, `eos` (an EOS token, id `vocab_size`, is appended and read), `cls` (a CLS
token, id `vocab_size`, is prepended and read), or `all` positions.

Init schemes (`init`, shared by every model kind: `learnability.models.init`): `default` (= `pytorch`)
is PyTorch's own (what `nn.TransformerEncoder` gives: embeddings N(0,1), Linear kaiming-uniform,
Xavier-uniform q/k/v); `uniform` draws *every* parameter (LayerNorm gains and
biases included) from U[−B, B] with B = `init_scale`; `gaussian` every parameter from N(0, σ²), σ =
`init_scale`; `xavier_uniform` / `xavier_normal` apply Xavier to every matrix (q, k and v separately,
embeddings included) with zero biases and LayerNorm 1 / 0.
Three named settings override the scheme for some parameters, after it has drawn them (so the other
parameters, and the random stream, are the same whichever is chosen): `ln_init` ("scheme" as above, or
"unit": every LayerNorm gain 1 and bias 0, as the public code of Bhattamishra et al. 2023 keeps them),
`bias_init` ("scheme", or "zero": every bias of the attention and MLP linears 0, that code's default) and
`readout_bias_init` ("scheme", or "zero": the read-out bias b of T(x) = wᵀy + b is 0). The defaults
("scheme") are the historical behaviour. `layer_init="copy"` starts every block as a copy of the first
(PyTorch's `nn.TransformerEncoder` deep-copies one layer, so Hahn & Rofin's published model starts so);
the default "independent" draws each block on its own. `token_scale="sqrt_d"` multiplies the token
embedding by √d_model in the forward (the cited code's scaling; `learnability.models.init`).

Speed: without a trace, attention runs through `F.scaled_dot_product_attention` with a fused q/k/v
projection, and since only one position is read, the last layer computes that position only (its keys
and values still see every position), which gives exactly the same output for less work. The first
layer's input takes only (vocabulary) × (positions) distinct rows, so when that table is much smaller
than the batch, everything before its attention mixes positions (q/k/v projection, pre-LN) runs on
the table and is gathered per position: the same function (up to float rounding) without a third of
the matmul work at the published shape. With a trace every position of every layer is computed and
the softmax is explicit.

`run(tokens)` is `forward` without the input check, for any leading dims of a stacked ensemble
(`learnability.sweep.ensemble`): tokens (K, B, n) -> (K, B) with every parameter stacked (K, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, cast

import torch
from torch import Tensor, nn

from learnability.config import HASH_OMIT_DEFAULT
from learnability.errors import UserError, check_choice
from learnability.models.init import INITS, TOKEN_SCALES, scheme_init, token_factor
from learnability.models.layers import (
    Block,
    BlockConfig,
    Embedding,
    LayerNorm,
    Linear,
    check_tokens,
    default_init,
)
from learnability.models.trace import Trace


@dataclass
class BooleanTransformerConfig:
    """Shape, LayerNorm, embedding, readout and init of a `BooleanTransformer` (module doc for each)."""

    arch: Literal["boolean_transformer"] = "boolean_transformer"  # the Boolean-string transformer
    n_layers: int = 2  # transformer blocks
    n_heads: int = 2  # attention heads per block (must divide d_model)
    d_model: int = 128  # width of the residual stream
    d_ff: int = 128  # hidden width of each block's MLP
    activation: Literal["relu", "gelu"] = "relu"  # the MLP's nonlinearity
    dropout: float = 0.0  # dropout probability (0 = none)
    ln: Literal["post", "pre", "none"] = "post"  # LayerNorm placement
    ln_eps: float = 1e-5  # any value >= 0, exactly 0 included
    # concat: token ‖ position embedding (D/2 each, as published); add: both of width D, summed
    embedding: Literal["concat", "add"] = "concat"
    # learned table, fixed sin/cos, ALiBi distance biases, or no position information
    positions: Literal["learned", "sinusoidal", "alibi", "none"] = "learned"
    # longest input (bits, not counting EOS/CLS) a learned position table accepts
    max_len: int = 256
    # the position read: last, an appended EOS token, a prepended CLS token, or all (one per position)
    readout: Literal["last", "eos", "cls", "all"] = "last"
    causal: bool = False  # causal attention mask (each position sees only earlier ones)
    vocab_size: int = 2  # input tokens (2 for bits; EOS / CLS get an extra id)
    # initialisation scheme (module docstring; the same for every model kind, `models.init`): PyTorch's
    # own (default = pytorch here), uniform / Gaussian of scale init_scale, Xavier
    init: Literal[
        "default", "pytorch", "uniform", "gaussian", "xavier_uniform", "xavier_normal"
    ] = "default"
    # B of uniform [-B, B] / σ of gaussian (both 10 in Bhattamishra et al. 2023)
    init_scale: float = 10.0
    # "unit": every LayerNorm gain 1 and bias 0 after the scheme's draw. These three overrides of the
    # scheme (module doc) are left out of run ids at "scheme", so stored runs keep their ids
    ln_init: Literal["scheme", "unit"] = field(default="scheme", metadata=HASH_OMIT_DEFAULT)
    # "zero": every attention / MLP bias starts at 0 instead of the scheme's draw
    bias_init: Literal["scheme", "zero"] = field(default="scheme", metadata=HASH_OMIT_DEFAULT)
    # "zero": the read-out bias starts at 0 instead of the scheme's draw
    readout_bias_init: Literal["scheme", "zero"] = field(
        default="scheme", metadata=HASH_OMIT_DEFAULT
    )
    # "copy": every block starts as a copy of the first (nn.TransformerEncoder's deep copy)
    layer_init: Literal["independent", "copy"] = field(
        default="independent", metadata=HASH_OMIT_DEFAULT
    )
    # "sqrt_d": the token embedding times √d_model in the forward, as Bhattamishra et al.'s code
    # scales it (`models.init`); "none" (not in run ids) leaves it as it is
    token_scale: Literal["none", "sqrt_d"] = field(default="none", metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        if self.init == "pytorch":  # PyTorch's init is this model's default: one name, one run id
            self.init = "default"
        self.validate()

    def validate(self) -> None:
        """Raise a one-line UserError for an inconsistent configuration."""
        check_choice("activation", self.activation, ("relu", "gelu"))
        check_choice("ln placement", self.ln, ("post", "pre", "none"))
        check_choice("embedding", self.embedding, ("concat", "add"))
        check_choice("positions", self.positions, ("learned", "sinusoidal", "alibi", "none"))
        check_choice("readout", self.readout, ("last", "eos", "cls", "all"))
        check_choice("init scheme", self.init, INITS)
        check_choice("ln_init", self.ln_init, ("scheme", "unit"))
        check_choice("bias_init", self.bias_init, ("scheme", "zero"))
        check_choice("readout_bias_init", self.readout_bias_init, ("scheme", "zero"))
        check_choice("layer_init", self.layer_init, ("independent", "copy"))
        check_choice("token_scale", self.token_scale, TOKEN_SCALES)
        for name in ("n_layers", "n_heads", "d_model", "d_ff", "max_len", "vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"{name}={value!r} is not allowed; it must be a positive integer")
        if self.d_model % self.n_heads:
            raise UserError(
                f"n_heads={self.n_heads} does not divide d_model={self.d_model}; pick a divisor of the width"
            )
        if (
            self.embedding == "concat"
            and self.positions in ("learned", "sinusoidal")
            and self.d_model % 2
        ):
            raise UserError(
                f"embedding='concat' needs an even d_model (half token, half position); got {self.d_model}"
            )
        if not self.ln_eps >= 0 or math.isinf(self.ln_eps):
            raise UserError(
                f"ln_eps={self.ln_eps!r} is not allowed; it must be a finite number >= 0 (0 allowed)"
            )
        if not 0 <= self.dropout < 1:
            raise UserError(f"dropout={self.dropout!r} is not allowed; it must be in [0, 1)")
        if not self.init_scale > 0:
            raise UserError(f"init_scale={self.init_scale!r} is not allowed; it must be > 0")


def sinusoidal_positions(t: int, width: int, device: torch.device, dtype: torch.dtype) -> Tensor:
    """(t, width) fixed sin/cos position codes (Vaswani et al. 2017), for any t."""
    pos = torch.arange(t, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(
        torch.arange(0, width, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / width)
    )
    out = torch.zeros(t, width, device=device)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)[:, : width // 2]
    return out.to(dtype)


class BooleanTransformer(nn.Module):
    """tokens (B, n) -> (B,) scalar, or (B, n) with readout="all"."""

    def __init__(
        self, config: BooleanTransformerConfig, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        config.validate()
        self.config = c = config
        self.extra = int(c.readout in ("eos", "cls"))  # one EOS / CLS token, id vocab_size
        split = c.embedding == "concat" and c.positions in ("learned", "sinusoidal")
        self.token_width = c.d_model // 2 if split else c.d_model
        self.position_width = c.d_model - self.token_width if split else c.d_model
        self.token_embedding = Embedding(c.vocab_size + self.extra, self.token_width)
        self.token_factor = token_factor(c.token_scale, c.d_model)  # None: unscaled
        if c.positions == "learned":
            self.position_embedding = Embedding(c.max_len + self.extra, self.position_width)
        shape = BlockConfig(
            c.d_model, c.n_heads, c.d_ff, c.activation, c.dropout, c.ln, c.ln_eps, c.causal
        )
        self.layers = nn.ModuleList(Block(shape, i) for i in range(c.n_layers))
        # pre-LN leaves the residual stream un-normalised: normalise once before the readout
        self.final_ln = LayerNorm(c.d_model, c.ln_eps, "final_ln") if c.ln == "pre" else None
        self.readout = Linear(c.d_model, 1)
        if c.positions == "alibi":
            heads = torch.arange(1, c.n_heads + 1, dtype=torch.float32)
            for block in self.blocks:
                block.attn.alibi_slopes = 2.0 ** (-8.0 * heads / c.n_heads)  # (H,)
        self.reset_parameters(generator)

    @property
    def blocks(self) -> list[Block]:
        return [cast(Block, b) for b in self.layers]

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Initialise every parameter by the configured scheme, from `generator` (global RNG if None)."""
        c, g = self.config, generator
        default_init(self, g)
        if c.init not in ("default", "pytorch"):
            scheme_init(self, c.init, c.init_scale, g)
        self._override_init()

    @torch.no_grad()
    def _override_init(self) -> None:
        """The named overrides of the scheme (no random draws, so the scheme's stream is unchanged)."""
        c = self.config
        norms = [m for m in self.modules() if isinstance(m, LayerNorm)]
        linears = [m for m in self.modules() if isinstance(m, nn.Linear) and m is not self.readout]
        for norm in norms if c.ln_init == "unit" else []:
            norm.weight.fill_(1.0)
            norm.bias.zero_()
        for linear in linears if c.bias_init == "zero" else []:
            if linear.bias is not None:
                linear.bias.zero_()
        if c.readout_bias_init == "zero":
            self.readout.bias.zero_()
        for block in self.blocks[1:] if c.layer_init == "copy" else []:
            block.load_state_dict(self.blocks[0].state_dict())

    def positional_parameter_names(self) -> set[str]:
        return {"position_embedding.weight"} if self.config.positions == "learned" else set()

    def query_key_matrices(self) -> list[list[tuple[Tensor, Tensor]]]:
        """Per layer, per head, (K, Q): each (D/H, D), so head h scores q·k = xᵀ Qᵀ K y (before 1/√dh)."""
        out = []
        d, dh = self.config.d_model, self.config.d_model // self.config.n_heads
        for block in self.blocks:
            w = block.attn.in_proj.weight
            q, k = w[:d], w[d : 2 * d]
            out.append(
                [
                    (k[h * dh : (h + 1) * dh], q[h * dh : (h + 1) * dh])
                    for h in range(self.config.n_heads)
                ]
            )
        return out

    def _check(self, tokens: Tensor) -> None:
        c = self.config
        limit = c.max_len if c.positions == "learned" else None
        what = "learned position table; use a larger max_len, or positions='sinusoidal' to generalise in length"
        check_tokens(tokens, c.vocab_size, limit, what)

    def _with_special(self, tokens: Tensor) -> Tensor:
        """tokens (..., n) -> (..., T): the EOS / CLS token (id vocab_size) appended / prepended."""
        c = self.config
        if c.readout not in ("eos", "cls"):
            return tokens
        special = torch.full(
            (*tokens.shape[:-1], 1), c.vocab_size, dtype=tokens.dtype, device=tokens.device
        )
        return torch.cat([tokens, special] if c.readout == "eos" else [special, tokens], -1)

    def _positions(self, t: Tensor | int, like: Tensor) -> Tensor | None:
        """(..., T, Dp) position codes of the first t positions (a stacked table keeps its member dim)."""
        c = self.config
        t = int(t)
        if c.positions == "learned":
            return self.position_embedding.weight[..., :t, :]
        if c.positions == "sinusoidal":
            return sinusoidal_positions(t, self.position_width, like.device, like.dtype)
        return None  # none / alibi (alibi acts inside attention)

    def _combine(self, x: Tensor, pos: Tensor | None) -> Tensor:
        """Token embeddings x (..., B, T, Dt) with position codes (..., T, Dp) -> (..., B, T, D)."""
        if pos is None:
            return x
        pos = pos.unsqueeze(-3)  # one code per position, shared by the batch
        if self.config.embedding == "add":
            return x + pos
        return torch.cat([x, pos.expand(*x.shape[:-1], -1)], -1)

    def embed(self, tokens: Tensor) -> Tensor:
        """tokens (B, n) -> (B, T, D), T = n + 1 with EOS / CLS (any leading dims)."""
        tokens = self._with_special(tokens)
        x = self.token_embedding(tokens)  # (B, T, Dt)
        if self.token_factor is not None:
            x = x * self.token_factor
        return self._combine(x, self._positions(tokens.shape[-1], x))

    def embed_rows(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """The embedding as (table, rows): table (R, D) holds every distinct input row (token value ×
        position, or token value alone without position codes) and position t of string b is row
        rows[b, t]; any leading dims (a stacked ensemble's members) are kept on both."""
        tokens = self._with_special(tokens)
        t = tokens.shape[-1]
        ids = self.token_embedding.weight  # (V, Dt): each token value once
        if self.token_factor is not None:
            ids = ids * self.token_factor
        pos = self._positions(t, ids)
        if pos is None:
            return ids, tokens
        table = self._combine(ids.unsqueeze(-2).expand(*ids.shape[:-1], t, ids.shape[-1]), pos)
        # table (V, T, D): row v·T + t is token v at position t
        steps = torch.arange(t, device=tokens.device)
        return table.flatten(-3, -2), tokens * t + steps

    def _table_pays(self, tokens: Tensor) -> bool:
        """True when the distinct-row table has at most a quarter of the rows of the batch (B, n) —
        per member for a stacked batch (K, B, n), so a member takes the path it takes alone."""
        c = self.config
        values = c.vocab_size + self.extra
        batch, n = tokens.shape[-2], tokens.shape[-1]
        if c.positions in ("none", "alibi"):
            return 4 * values <= batch * n
        return 4 * values <= batch

    def forward(self, tokens: Tensor, trace: bool = False) -> Tensor | tuple[Tensor, Trace]:
        """tokens (B, n) long -> (B,) (or (B, n) for readout="all"); with trace=True also a Trace."""
        self._check(tokens)
        if not trace:
            return self.run(tokens)
        c = self.config
        rec = Trace()
        x = self.embed(tokens)
        rec.hidden.append(x)
        for block in self.blocks:
            x = block(x, rec)
            rec.hidden.append(x)
        if self.final_ln is not None:
            x = self.final_ln(x, rec)
        if c.readout == "all":
            return self.readout(x).squeeze(-1), rec
        return self.readout(x[:, 0 if c.readout == "cls" else -1]).squeeze(-1), rec

    def run(self, tokens: Tensor) -> Tensor:
        """The fast path of `forward` (no trace, no input check) for tokens (..., n) -> (...) or (..., n)."""
        c = self.config
        read = None if c.readout == "all" else (0 if c.readout == "cls" else -1)
        last = len(self.layers) - 1
        blocks = self.blocks
        if self._table_pays(tokens):
            table, rows = self.embed_rows(tokens)
            x = blocks[0](table, None, read if last == 0 else None, rows)
        else:
            x = blocks[0](self.embed(tokens), None, read if last == 0 else None)
        for i in range(1, len(blocks)):
            # the last layer only needs the read position (same numbers, less work)
            x = blocks[i](x, None, read if i == last else None)
        if self.final_ln is not None:
            x = self.final_ln(x)
        if read is None:
            return self.readout(x).squeeze(-1)  # (..., T)
        return self.readout(x[..., -1, :]).squeeze(-1)  # (...,): the last layer kept one position


__all__ = ["BooleanTransformer", "BooleanTransformerConfig", "sinusoidal_positions"]
