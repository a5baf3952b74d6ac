"""Building blocks shared by the transformers: a LayerNorm that allows eps = 0, self-attention, MLP.

Each block takes an optional `Trace`; without one it runs the fused fast path (`F.layer_norm`,
`F.scaled_dot_product_attention`), with one it computes the same quantities explicitly and records them.

Stacked ensembles (`learnability.sweep.ensemble`): every parameter may carry a leading member dim K
(a Linear weight (K, out, in), a LayerNorm gain (K, D), an embedding table (K, V, D)) and then the
activations carry it too ((K, B, T, D)). `linear`, `embedding` and `LayerNorm` dispatch on the
parameter's rank; attention folds K into the batch. Each member's numbers are bit-identical to the
same model run alone: a batched matmul gives, per member, exactly the bits of the single one (on CPU,
`tests/test_ensemble.py` checks it), and the LayerNorm runs the single kernel once per member.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from learnability.errors import UserError
from learnability.models.trace import Trace


def linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """`F.linear`, or with a stacked weight (K, out, in) one batched matmul per member: x (K, ..., in).

    Either way the matmul sees x as one contiguous matrix per member (a strided input would change the
    kernel's blocking, and so the last bits, between the two)."""
    if weight.dim() == 2:
        return F.linear(x.reshape(-1, x.shape[-1]), weight, bias).view(*x.shape[:-1], -1)
    flat = x.reshape(weight.shape[0], -1, x.shape[-1])
    out = cast(Tensor, _StackedLinear.apply(flat, weight, bias))
    return out.view(*x.shape[:-1], weight.shape[-2])


# below this many multiply-adds per product torch's batched matmul takes a plain loop, not the BLAS
# kernel the single product uses (ATen's bmm cut-over)
TINY_PRODUCT = 400


class _StackedLinear(torch.autograd.Function):
    """x (K, N, in) @ weight (K, out, in)ᵀ + bias (K, out), each member with the bits `F.linear` gives
    it alone: batched products in the orientation autograd uses for the single one (dW = gᵀ x), and
    member by member where the single product takes another kernel (a width-1 output, a scalar
    read-out; products under TINY_PRODUCT)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        ctx.loop = weight.shape[1] == 1 or x.shape[1] * x.shape[2] * weight.shape[1] < TINY_PRODUCT
        wt = weight.transpose(1, 2)
        if not ctx.loop:
            return torch.bmm(x, wt) if bias is None else torch.baddbmm(bias.unsqueeze(1), x, wt)
        out = x.new_empty(x.shape[0], x.shape[1], weight.shape[1])
        for i in range(x.shape[0]):
            if bias is None:
                torch.mm(x[i], wt[i], out=out[i])
            else:
                torch.addmm(bias[i], x[i], wt[i], out=out[i])
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, weight = ctx.saved_tensors
        grad = grad.contiguous()
        gx = gw = None
        if ctx.loop:
            if ctx.needs_input_grad[0]:
                gx = torch.stack([g.mm(w) for g, w in zip(grad, weight)])
            if ctx.needs_input_grad[1]:
                gw = torch.stack([g.t().mm(xi) for g, xi in zip(grad, x)])
        else:
            gx = torch.bmm(grad, weight) if ctx.needs_input_grad[0] else None
            gw = torch.bmm(grad.transpose(1, 2), x) if ctx.needs_input_grad[1] else None
        gb = grad.sum(1) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return gx, gw, gb


def embedding(ids: Tensor, weight: Tensor) -> Tensor:
    """`F.embedding`, or with a stacked table (K, V, D) each member's ids (K, ...) looked up in its own
    table (one lookup in the flattened table: its backward accumulates each row in the same order)."""
    if weight.dim() == 2:
        return F.embedding(ids, weight)
    k, v, d = weight.shape
    offsets = torch.arange(0, k * v, v, device=ids.device).view(k, *[1] * (ids.dim() - 1))
    return F.embedding(ids + offsets, weight.reshape(k * v, d))


class Linear(nn.Linear):
    """`nn.Linear` (same parameters, init and state dict) whose weight may be stacked (`linear`)."""

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)


class Embedding(nn.Embedding):
    """`nn.Embedding` (same parameters, init and state dict) whose table may be stacked (`embedding`)."""

    def forward(self, ids: Tensor) -> Tensor:
        return embedding(ids, self.weight)


class _MemberLayerNorm(torch.autograd.Function):
    """LayerNorm with per-member gain and bias (K, D) on x (K, ..., D): the single fused kernel (and its
    backward) once per member, writing into one output, so each member has the bits of its own run."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor:
        x = x.contiguous()
        shape = [x.shape[-1]]
        out = torch.empty_like(x)
        mean = x.new_empty(*x.shape[:-1], 1)
        rstd = x.new_empty(*x.shape[:-1], 1)
        for i in range(weight.shape[0]):
            torch.ops.aten.native_layer_norm.out(
                x[i], shape, weight[i], bias[i], eps, out0=out[i], out1=mean[i], out2=rstd[i]
            )
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, weight, bias, mean, rstd = ctx.saved_tensors
        grad = grad.contiguous()
        need = [ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]]
        gx = torch.empty_like(x) if need[0] else x.new_empty(0)
        gw = torch.empty_like(weight) if need[1] else x.new_empty(0)
        gb = torch.empty_like(bias) if need[2] else x.new_empty(0)
        for i in range(weight.shape[0]):
            args = (grad[i], x[i], [x.shape[-1]], mean[i], rstd[i], weight[i], bias[i], need)
            if all(need):
                torch.ops.aten.native_layer_norm_backward.out(
                    *args, out0=gx[i], out1=gw[i], out2=gb[i]
                )
                continue
            # frozen gain and bias: only the input gradient is computed (the out= form wants all three)
            parts = torch.ops.aten.native_layer_norm_backward(*args)
            for want, into, part in zip(need, (gx, gw, gb), parts):
                if want:
                    into[i].copy_(part)
        return (gx if need[0] else None, gw if need[1] else None, gb if need[2] else None, None)


SHORT_ROWS = (
    16  # softmax rows this short go through `_softmax_rows`: torch's kernel costs ~0.2–0.5 µs a row
)


def _softmax_rows(x: Tensor) -> Tensor:
    """Softmax over the last dim in five whole-tensor passes (no autograd)."""
    e = torch.sub(x, x.amax(-1, keepdim=True)).exp_()
    return e.div_(e.sum(-1, keepdim=True))


def _softmax_rows_backward(grad: Tensor, p: Tensor) -> Tensor:
    gp = grad * p
    return gp.sub_(p * gp.sum(-1, keepdim=True))


class _ShortSoftmax(torch.autograd.Function):
    """Softmax over short rows (≤ SHORT_ROWS): the same function, a few times faster there."""

    generate_vmap_rule = True  # the models also run under torch.func.vmap (measure.recogniser)

    @staticmethod
    def forward(x: Tensor) -> Tensor:
        return _softmax_rows(x)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (p,) = ctx.saved_tensors
        return _softmax_rows_backward(grad, p)


def softmax(x: Tensor) -> Tensor:
    """Softmax over the last dim; the kernel is chosen by the row length alone, so a member of a
    stacked ensemble takes the path it takes alone."""
    if x.shape[-1] <= SHORT_ROWS:
        return cast(Tensor, _ShortSoftmax.apply(x))
    return x.softmax(-1)


class _QueryAttention(torch.autograd.Function):
    """softmax(scale · qk xsᵀ + add) xs for one query per string: xs (N, T, D), qk (N, H, D) -> (N, H, D).

    Written out so its backward is four batched products and no transposed gradient (autograd's own
    takes twice as long on 20-token strings): the gradient of xs, which two products share, comes
    from one product of the concatenated operands."""

    generate_vmap_rule = True  # the models also run under torch.func.vmap (measure.recogniser)

    @staticmethod
    def forward(xs: Tensor, qk: Tensor, scale: float, add: Tensor | None) -> tuple[Tensor, Tensor]:
        scores = torch.bmm(qk, xs.transpose(1, 2)).mul_(scale)
        if add is not None:
            scores = scores.add_(add)
        p = _softmax_rows(scores) if scores.shape[-1] <= SHORT_ROWS else torch.softmax(scores, -1)
        return torch.bmm(p, xs), p

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: tuple[Tensor, Tensor]) -> None:
        xs, qk, scale, _ = inputs
        p = output[1]
        ctx.mark_non_differentiable(p)
        ctx.save_for_backward(xs, qk, p)
        ctx.scale = scale

    @staticmethod
    def backward(ctx: Any, grad: Tensor, _: Tensor | None = None) -> tuple[Tensor | None, ...]:
        xs, qk, p = ctx.saved_tensors
        grad = grad.contiguous()
        gp = torch.bmm(grad, xs.transpose(1, 2))
        if p.shape[-1] <= SHORT_ROWS:
            gs = _softmax_rows_backward(gp, p).mul_(ctx.scale)
        else:
            gs = torch._softmax_backward_data(gp, p, -1, p.dtype).mul_(ctx.scale)
        gqk = torch.bmm(gs, xs) if ctx.needs_input_grad[1] else None
        gxs = None
        if ctx.needs_input_grad[0]:
            gxs = torch.bmm(torch.cat([gs, p], 1).transpose(1, 2), torch.cat([qk, grad], 1))
        return gxs, gqk, None, None


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
        weight: Tensor = self.weight
        bias: Tensor = self.bias
        if trace is None and self.eps > 0:
            if weight.dim() == 1:
                return F.layer_norm(x, x.shape[-1:], weight, bias, self.eps)
            return cast(Tensor, _MemberLayerNorm.apply(x, weight, bias, self.eps))
        if weight.dim() == 2:  # stacked: each member's gain and bias along its own rows
            view = (weight.shape[0],) + (1,) * (x.dim() - 2) + (weight.shape[1],)
            weight, bias = weight.view(view), bias.view(view)
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
        out = centred * normaliser * weight + bias
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
        self.in_proj = Linear(d, 3 * d)
        self.out_proj = Linear(d, d)
        # ALiBi slopes (H,): a model with positions="alibi" sets them; None = no distance bias
        self.register_buffer("alibi_slopes", None, persistent=False)

    def _heads(self, t: Tensor) -> Tensor:
        # (..., n, D) -> (B', H, n, dh): any leading dims (a stacked ensemble's members) join the batch
        return t.reshape(-1, t.shape[-2], self.n_heads, self.d // self.n_heads).transpose(1, 2)

    def forward(
        self,
        x: Tensor,
        trace: Trace | None = None,
        query: int | None = None,
        rows: Tensor | None = None,
        row: Tensor | None = None,
        at: Tensor | None = None,
    ) -> Tensor:
        """x (..., T, D) -> (..., T, D); with `query=i` only position i asks, giving (..., 1, D)
        (`row`: x's slice at `query`, when the caller has taken it); with `at` (P,) long only those
        positions ask, giving (..., P, D).

        Asking only one query is how the scalar-readout models skip work in their last layer. With
        `rows` (..., T) long, x is a table (..., R, D) of distinct input rows and position t of the input
        is row rows[t]: q, k, v are projected on the table and gathered (same numbers, R rows of work).
        """
        if at is not None:
            plain = trace is None and rows is None and self.alibi_slopes is None
            if plain and not (self.dropout and self.training):
                return self.out_proj(self._queries_at(x, at))
            return self.forward(x, trace, rows=rows).index_select(-2, at)
        if rows is not None and query is not None:
            x, rows = embedding(rows, x), None  # a one-layer model: its only layer asks one query
        t = rows.shape[-1] if rows is not None else x.shape[-2]
        exact = trace is None and not (self.dropout and self.training)
        if query is not None:
            query %= t  # -1 means the last position
            if exact:
                return self.out_proj(self._one_query(x, query, row))
        elif rows is not None and exact:
            return self.out_proj(self._table_attention(x, rows))
        lead, d = (x.shape[:-2] if rows is None else rows.shape[:-1]), x.shape[-1]
        if rows is not None:
            q, k, v = embedding(rows, self.in_proj(x)).split(d, dim=-1)
        elif query is None:
            q, k, v = self.in_proj(x).split(d, dim=-1)
        else:
            w, bias = self.in_proj.weight, self.in_proj.bias
            q = linear(x[..., query : query + 1, :], w[..., :d, :], bias[..., :d])
            k, v = linear(x, w[..., d:, :], bias[..., d:]).split(d, dim=-1)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        drop = self.dropout if self.training else 0.0
        mask = self._mask(t, query, x.device)
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
        y = y.transpose(1, 2).reshape(*lead, -1, d)
        return self.out_proj(y)

    def _queries_at(self, x: Tensor, at: Tensor) -> Tensor:
        """Attention of the positions `at` (P,) alone, x (..., T, D) -> (..., P, D) before `out_proj`:
        keys and values are projected at every position, queries only at `at`, and the causal mask
        keeps each query's own row of the full square, so those rows equal the full forward's."""
        d, t = x.shape[-1], x.shape[-2]
        w, bias = self.in_proj.weight, self.in_proj.bias
        q = linear(x.index_select(-2, at), w[..., :d, :], bias[..., :d])  # (..., P, D)
        k, v = linear(x, w[..., d:, :], bias[..., d:]).split(d, dim=-1)  # (..., T, D) each
        q, k, v = self._heads(q), self._heads(k), self._heads(v)  # (B', H, P or T, dh)
        mask = None
        if self.causal:
            mask = at[:, None] >= torch.arange(t, device=x.device)[None, :]  # (P, T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B', H, P, dh)
        return y.transpose(1, 2).reshape(*x.shape[:-2], -1, d)

    def _mask(self, t: int, query: int | None, device: torch.device) -> Tensor | None:
        """(Tq, T) bool, True = may attend; None without a causal mask."""
        if not self.causal:
            return None
        keys = torch.arange(t, device=device)
        return (keys if query is None else keys[query : query + 1])[:, None] >= keys[None, :]

    def _table_attention(self, table: Tensor, rows: Tensor) -> Tensor:
        """Attention over an input of distinct rows: table (..., R, D), rows (..., B, T) ->
        (..., B, T, D) before `out_proj`. Every score q_i·k_j is one of R² numbers A[r_i, r_j] (A =
        Q Kᵀ on the table), and Σ_j p_ij v_j = Σ_r P_ir V_r with P_ir the weights of the positions
        that are row r: two gathers and one matmul of R columns instead of per-string attention."""
        d, h = table.shape[-1], self.n_heads
        dh = d // h
        r = table.shape[-2]
        t = rows.shape[-1]
        q, k, v = self.in_proj(table).split(d, dim=-1)  # (..., R, D) each
        # contiguous operands: a view alone (K' = 1) and a copy stacked would block the matmul differently
        q, k, v = (z.reshape(-1, r, h, dh).transpose(1, 2).contiguous() for z in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))  # (K', H, R, R)
        ids = rows.reshape(scores.shape[0], 1, -1, t)  # (K', 1, B, T)
        pairs = (ids.unsqueeze(-1) * r + ids.unsqueeze(-2)).flatten(2)  # (K', 1, B·T·T)
        s = scores.flatten(2).gather(-1, pairs.expand(-1, h, -1))
        s = s.view(*s.shape[:2], -1, t, t)  # (K', H, B, T, T)
        mask = self._mask(t, None, table.device)
        distance_bias = self._alibi(t, None, s.dtype, mask)
        if distance_bias is not None:
            s = s + distance_bias.unsqueeze(1)
        elif mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        p = softmax(s)
        # the weight of each table row: positions j that are row r add up (distinct when positions are coded)
        cols = ids.unsqueeze(-2).expand(-1, h, -1, t, -1)  # (K', H, B, T, T): row of key j
        weights = p.new_zeros(*p.shape[:-1], r).scatter_add(-1, cols, p)  # (K', H, B, T, R)
        y = torch.matmul(weights.flatten(2, 3), v)  # (K', H, B·T, dh)
        y = y.view(*y.shape[:2], -1, t, dh).permute(0, 2, 3, 1, 4)  # (K', B, T, H, dh)
        return y.reshape(*rows.shape, d)

    def _one_query(self, x: Tensor, query: int, row: Tensor | None = None) -> Tensor:
        """Attention of position `query` alone, x (..., T, D) -> (..., 1, D) before `out_proj` (`row`:
        x[..., query : query + 1, :] when the caller has it, so the slice is taken once), done in
        the input space: q·(W_k x_j + b_k) = (W_kᵀ q)·x_j + const (the constant cancels in the softmax)
        and Σ_j p_j (W_v x_j + b_v) = W_v (Σ_j p_j x_j) + b_v, so keys and values are never projected
        for all T positions: O(D²) instead of O(T·D²) per string, the same function up to rounding."""
        *lead, t, d = x.shape
        h, dh = self.n_heads, d // self.n_heads
        w, bias = self.in_proj.weight, self.in_proj.bias
        if row is None:
            row = x[..., query : query + 1, :]
        q = linear(row, w[..., :d, :], bias[..., :d])  # (..., B, 1, D)
        # per (member, head) batched products; the member dims lead every operand
        # every matmul operand contiguous: alone (K' = 1) a reshape is often a strided view where
        # stacked it is a copy, and the two layouts would round differently
        q = q.reshape(-1, q.shape[-3], h, dh).transpose(1, 2).contiguous()  # (K', H, B, dh)
        wk = w[..., d : 2 * d, :].reshape(-1, h, dh, d).contiguous()  # (K', H, dh, D)
        qk = torch.matmul(q, wk)  # (K', H, B, D): W_kᵀ q per head
        mask = self._mask(t, query, x.device)
        shift = self._alibi(t, query, x.dtype, mask)  # (H, 1, T) or None
        if shift is None and mask is not None:
            shift = torch.zeros(mask.shape, dtype=x.dtype, device=x.device).masked_fill(
                ~mask, float("-inf")
            )
        xs = x.reshape(-1, t, d).contiguous()  # (K'·B, T, D)
        qk = qk.transpose(1, 2).reshape(xs.shape[0], h, d).contiguous()  # (K'·B, H, D)
        add = None if shift is None else shift.reshape(-1, t)  # (H or 1, T)
        z = _QueryAttention.apply(xs, qk, 1.0 / math.sqrt(dh), add)[0]  # Σ_j p_j x_j
        z = z.view(-1, q.shape[-2], h, d).transpose(1, 2).contiguous()  # (K', H, B, D)
        wv = (
            w[..., 2 * d :, :].reshape(-1, h, dh, d).transpose(-2, -1).contiguous()
        )  # (K', H, D, dh)
        y = torch.matmul(z, wv)  # (K', H, B, dh)
        y = y + bias[..., 2 * d :].reshape(-1, h, 1, dh)
        return y.permute(0, 2, 1, 3).reshape(*lead, 1, d)

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
        self.fc = Linear(d, d_ff)
        self.proj = Linear(d_ff, d)
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

    def forward(
        self,
        x: Tensor,
        trace: Trace | None = None,
        query: int | None = None,
        rows: Tensor | None = None,
        at: Tensor | None = None,
    ) -> Tensor:
        """x (..., T, D) -> (..., T, D), or (..., 1, D) holding only position `query`, or
        (..., P, D) holding only the positions `at` (P,) long (a last layer whose other outputs no
        loss reads: every sublayer after attention runs on P rows instead of T).

        With `rows` (no trace), x is a table of distinct input rows (see `SelfAttention.forward`):
        everything before attention mixes positions is computed on the table."""
        full = x if rows is None else embedding(rows, x)
        if at is not None:
            here = full.index_select(-2, at)
            ask: dict[str, Any] = {"rows": rows, "at": at}
        else:
            if query is not None:
                query %= full.shape[-2]
            here = full if query is None else full[..., query : query + 1, :]
            ask = {"query": query, "rows": rows}
        if self.ln == "pre":
            x = here + self.drop1(self.attn(self.ln1(x, trace), trace, **ask))
            return x + self.drop2(self.mlp(self.ln2(x, trace)))
        if query is not None and rows is None:
            ask["row"] = here  # the query row, sliced once
        x = here + self.drop1(self.attn(x, trace, **ask))
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
