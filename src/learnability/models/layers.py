"""Building blocks shared by the transformers: a LayerNorm that allows eps = 0, self-attention, MLP.

Each block takes an optional `Trace`; without one it runs the fused fast path (`F.layer_norm`,
`F.scaled_dot_product_attention`), with one it computes the same quantities explicitly and records them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from learnability.errors import UserError
from learnability.models.trace import Trace


class LayerNorm(nn.Module):
    """LayerNorm over the last dim with gain and bias, for any eps >= 0.

    With eps = 0 a zero-variance row (all entries equal, or a variance that underflows to 0) has no
    defined normaliser. We define its output as the bias: the centred input of a constant row is exactly
    0, so we apply normaliser 0 instead of ∞ (no NaN, no inf, finite gradients) and count the row in
    `Trace.degenerate`. For eps > 0 this equals `torch.nn.LayerNorm` exactly.
    """

    def __init__(self, d: int, eps: float = 1e-5, name: str = "") -> None:
        super().__init__()
        self.eps, self.name = float(eps), name
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: Tensor, trace: Trace | None = None) -> Tensor:
        """x (..., D) -> (..., D)."""
        if trace is None and self.eps > 0:
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        total = centred.pow(2).mean(-1, keepdim=True) + self.eps
        # exact test for a constant row: a rounded mean can leave a ~1e-16 variance behind
        degenerate = (
            (total == 0) | (x == x[..., :1]).all(-1, keepdim=True) if self.eps == 0 else total == 0
        )
        # where() on a safe denominator keeps the gradient of the unselected branch finite
        safe = torch.where(degenerate, torch.ones_like(total), total)
        normaliser = torch.where(degenerate, torch.zeros_like(total), safe.rsqrt())
        out = centred * normaliser * self.weight + self.bias
        if trace is not None:
            trace.ln_inputs.append(x)
            trace.ln_normalisers.append(normaliser.squeeze(-1))
            trace.ln_names.append(self.name)
            trace.degenerate += int(degenerate.sum())
        return out


class SelfAttention(nn.Module):
    """Multi-head soft self-attention with a fused q/k/v projection (`in_proj`, rows q | k | v) and
    `out_proj`, laid out like `torch.nn.MultiheadAttention` so weights copy across one to one."""

    alibi_slopes: Tensor | None

    def __init__(self, d: int, n_heads: int, causal: bool = False, dropout: float = 0.0) -> None:
        super().__init__()
        self.d, self.n_heads, self.causal, self.dropout = d, n_heads, causal, dropout
        self.in_proj = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        # ALiBi slopes (H,): a model with positions="alibi" sets them; None = no distance bias
        self.register_buffer("alibi_slopes", None, persistent=False)

    def _heads(self, t: Tensor) -> Tensor:
        b, n, _ = t.shape
        return t.view(b, n, self.n_heads, self.d // self.n_heads).transpose(1, 2)  # (B, H, n, dh)

    def forward(self, x: Tensor, trace: Trace | None = None, query: int | None = None) -> Tensor:
        """x (B, T, D) -> (B, T, D); with `query=i` only position i asks, giving (B, 1, D).

        Asking only one query is how the scalar-readout models skip work in their last layer.
        """
        b, t, d = x.shape
        if query is not None:
            query %= t  # -1 means the last position
        if query is None:
            q, k, v = self.in_proj(x).split(d, dim=-1)
        else:
            w, bias = self.in_proj.weight, self.in_proj.bias
            q = F.linear(x[:, query : query + 1], w[:d], bias[:d])
            k, v = F.linear(x, w[d:], bias[d:]).split(d, dim=-1)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        drop = self.dropout if self.training else 0.0
        mask = None  # (Tq, T) bool, True = may attend
        if self.causal:
            keys = torch.arange(t, device=x.device)
            mask = (keys if query is None else keys[query : query + 1])[:, None] >= keys[None, :]
        distance_bias = self._alibi(t, query, q.dtype, mask)  # (H, Tq, T) float or None
        if trace is None:
            # a full causal square is SDPA's is_causal, whose kernels beat an explicit mask
            full = self.causal and query is None and distance_bias is None
            attn_mask = distance_bias if distance_bias is not None else (None if full else mask)
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=attn_mask, dropout_p=drop, is_causal=full
            )
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.n_heads)  # (B, H, Tq, T)
            if distance_bias is not None:
                scores = scores + distance_bias
            elif mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = scores.softmax(-1)
            trace.attentions.append(weights)
            y = F.dropout(weights, drop) @ v
        y = y.transpose(1, 2).reshape(b, -1, d)
        return self.out_proj(y)

    def _alibi(
        self, t: int, query: int | None, dtype: torch.dtype, mask: Tensor | None
    ) -> Tensor | None:
        """ALiBi (Press et al. 2022), symmetric for bidirectional attention: score −= m_h·|i − j|;
        masked pairs get −inf. (H, Tq, T), or None without slopes."""
        slopes = self.alibi_slopes
        if slopes is None:
            return None
        keys = torch.arange(t, device=slopes.device)
        rows = keys if query is None else keys[query : query + 1]
        distance = (rows[:, None] - keys[None, :]).abs().to(dtype)  # (Tq, T)
        bias = -slopes.to(dtype).view(-1, 1, 1) * distance  # (H, Tq, T)
        if mask is not None:
            bias = bias.masked_fill(~mask, float("-inf"))
        return bias


ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
}


class MLP(nn.Module):
    """fc (D -> F) -> activation -> dropout -> proj (F -> D)."""

    def __init__(self, d: int, d_ff: int, activation: str = "relu", dropout: float = 0.0) -> None:
        super().__init__()
        self.fc = nn.Linear(d, d_ff)
        self.proj = nn.Linear(d_ff, d)
        self.act = ACTIVATIONS[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """x (..., D) -> (..., D)."""
        return self.proj(self.dropout(self.act(self.fc(x))))


@dataclass(frozen=True)
class BlockConfig:
    """One transformer layer's shape: width, heads, MLP width and activation, dropout, where the
    LayerNorms sit ("post", "pre" or "none") and their eps, and whether attention is causal."""

    d_model: int
    n_heads: int
    d_ff: int
    activation: str = "relu"
    dropout: float = 0.0
    ln: str = "post"
    ln_eps: float = 1e-5
    causal: bool = False


class Block(nn.Module):
    """One transformer layer: attention and MLP sublayers with residuals and LayerNorm placed
    "post" (x = LN(x + f(x)), `torch.nn.TransformerEncoderLayer`'s default), "pre" (x = x + f(LN(x)),
    GPT-2) or "none". Parameter names: attn.*, mlp.*, ln1.*, ln2.* (under `layers.{index}`)."""

    def __init__(self, config: BlockConfig, index: int = 0) -> None:
        super().__init__()
        c = config
        self.ln = c.ln
        self.attn = SelfAttention(c.d_model, c.n_heads, c.causal, c.dropout)
        self.mlp = MLP(c.d_model, c.d_ff, c.activation, c.dropout)
        if c.ln != "none":
            self.ln1 = LayerNorm(c.d_model, c.ln_eps, f"layers.{index}.ln1")
            self.ln2 = LayerNorm(c.d_model, c.ln_eps, f"layers.{index}.ln2")
        self.drop1, self.drop2 = nn.Dropout(c.dropout), nn.Dropout(c.dropout)

    def forward(self, x: Tensor, trace: Trace | None = None, query: int | None = None) -> Tensor:
        """x (B, T, D) -> (B, T, D), or (B, 1, D) holding only position `query`."""
        here = x if query is None else x[:, query % x.shape[1]].unsqueeze(1)
        if self.ln == "pre":
            x = here + self.drop1(self.attn(self.ln1(x, trace), trace, query))
            return x + self.drop2(self.mlp(self.ln2(x, trace)))
        x = here + self.drop1(self.attn(x, trace, query))
        if self.ln == "post":
            x = self.ln1(x, trace)
            return self.ln2(x + self.drop2(self.mlp(x)), trace)
        return x + self.drop2(self.mlp(x))


def default_init(model: nn.Module, generator: torch.Generator | None = None) -> None:
    """PyTorch's own initialisation, redone from `generator` so a seed fully determines it:
    Linear kaiming-uniform(a=√5) with bias U(±1/√fan_in), Embedding N(0, 1), LayerNorm 1 / 0, and for
    attention what `nn.MultiheadAttention` does (Xavier-uniform `in_proj`, zero `in_proj` / `out_proj` bias)."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
            if module.bias is not None:
                bound = 1 / math.sqrt(module.in_features)
                nn.init.uniform_(module.bias, -bound, bound, generator=generator)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, generator=generator)
        elif isinstance(module, LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
    for module in model.modules():
        if isinstance(module, SelfAttention):
            nn.init.xavier_uniform_(module.in_proj.weight, generator=generator)
            nn.init.zeros_(module.in_proj.bias)
            nn.init.zeros_(module.out_proj.bias)


def check_tokens(
    tokens: Tensor, vocab_size: int, max_len: int | None = None, what: str = "position table"
) -> None:
    """UserError unless `tokens` is an integer (B, T) tensor, T >= 1, T <= max_len, ids in [0, vocab_size)."""
    if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.shape[1] < 1:
        shape = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise UserError(
            f"tokens of shape {shape} are not allowed; expected a (batch, length) tensor"
        )
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise UserError(
            f"tokens of dtype {tokens.dtype} are not allowed; expected integer token ids"
        )
    if max_len is not None and tokens.shape[1] > max_len:
        raise UserError(f"input length {tokens.shape[1]} exceeds the {what} (max_len={max_len})")
    if tokens.numel():
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= vocab_size:
            raise UserError(
                f"token ids in [{low}, {high}] are not allowed; the vocabulary is 0..{vocab_size - 1}"
            )
