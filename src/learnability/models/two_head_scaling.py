"""How much the two-head model needs: one population step over a grid of embedding dimensions m from one
nested draw, and one finite-sample step over a doubling grid of sample sizes n from one nested stream.

- `NestedEmbeddings` + `nested_m_scan`: row i of V_m is z_i[:m] / |z_i[:m]| with z_i ~ N(0, I_{m_max}), and
  θ_m = t[:m] / |t[:m]|, so every V_m has rows uniform on S^{m−1} and θ_m is uniform on S^{m−1} (θ̃ = −θ as in
  the paper), and the m grid shares common random numbers: success against m is one sample path per draw,
  not independent draws per m. Memory is O(d·m_max) float32 for the cached draw plus `GROUP_BYTES`; time
  O(d·m_max·|groups| + G·d·|grid|). Rows come in chunks of `ROWS`, each from its own seeded stream, so the
  draw does not depend on how it is cached or grouped (it does on `ROWS`).
- `sample_ladder`: the first n strings of one seeded stream, for n on an ascending grid; the gradient is
  accumulated block by block (O(n_max·d) in all, O(block·d) memory), the step size is chosen by the loss on
  the first `select` training strings, and the step is scored on the exact population loss.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from learnability.errors import UserError
from learnability.models.two_head import (
    attention_vjp,
    attention_weights,
    population_grad_weights,
    population_loss,
)
from learnability.models.two_head_steps import Criterion, scan_scores

ROWS = 1 << 14  # rows of z per chunk
# keep the draw (float32, as drawn) in memory up to this size, else redraw it for each pass
CACHE_BYTES = 1 << 30
GROUP_BYTES = 1 << 29  # the m values scanned together hold about 32·d bytes each beside the draw
_TAG = 0x5A0  # distinguishes these streams from any other use of the same seed


class NestedEmbeddings:
    """One draw z (d, m_max) ~ N(0, 1), drawn in float32 (row chunks from torch streams seeded by
    [tag, seed, chunk]), and t (m_max,) ~ N(0, 1); V_m = rows of z[:, :m] normalised, θ_m = t[:m]
    normalised. The arithmetic is float64: widening the float32 draw is exact, so caching changes no
    number."""

    def __init__(self, d: int, m_max: int, seed: int) -> None:
        if d < 2 or m_max < 1:
            raise UserError(
                f"nested embeddings need d >= 2 and m_max >= 1, got d={d}, m_max={m_max}"
            )
        self.d, self.m_max, self.seed = d, m_max, seed
        self.t = torch.from_numpy(
            np.random.default_rng([_TAG, seed, 1 << 40]).standard_normal(m_max)
        )
        self._cache: list[Tensor] | None = None
        if d * m_max * 4 <= CACHE_BYTES:
            self._cache = [z for _, z in self._draw()]

    def _draw(self) -> Iterator[tuple[int, Tensor]]:
        for k, start in enumerate(range(0, self.d, ROWS)):
            state = np.random.SeedSequence([_TAG, self.seed, k]).generate_state(1, np.uint64)[0]
            g = torch.Generator().manual_seed(int(state) & (2**63 - 1))
            rows = min(ROWS, self.d - start)
            yield start, torch.randn(rows, self.m_max, generator=g, dtype=torch.float32)

    def chunks(self, m: int | None = None) -> Iterator[tuple[int, Tensor]]:
        """(start, z rows (r, m) float64) for the first m columns (default m_max); those columns of
        row i, normalised, are v_i of V_m."""
        m = self.m_max if m is None else m
        if self._cache is not None:
            for start, z in zip(range(0, self.d, ROWS), self._cache):
                yield start, z[:, :m].double()
        else:
            for start, z in self._draw():
                yield start, z[:, :m].double()

    def theta(self, m: int) -> Tensor:
        t = self.t[:m]
        return t / t.norm()

    def V(self, m: int) -> Tensor:
        """The whole V_m (d, m); for tests and small d."""
        z = torch.cat([z for _, z in self.chunks(m)])
        return z / z.norm(dim=1, keepdim=True)


@dataclass
class MScan:
    """One population step at one m: loss and specialisation (G,) at each step size, and at the start."""

    m: int
    loss: Tensor
    spec: Tensor
    loss0: float


def nested_m_scan(
    emb: NestedEmbeddings, m_grid: Sequence[int], kind: str, p: int, q: int, etas: Tensor
) -> list[MScan]:
    """One population step from θ_m, θ̃_m = −θ_m at every step size η (G,) for each m in the grid.

    The m grid goes in groups (as many m as fit in `GROUP_BYTES`); each group takes three passes over the first m_g columns of
    the draw (m_g its largest m): prefix norms |z_i[:m]| and products z_i[:m]·t[:m] by cumulative sums;
    ∇θ = gs @ V for every m of the group in one product; δ = ∇θ @ Vᵀ likewise (∇θ zero beyond m). The
    row normalisation is folded into the products (v_i = z_i[:m]·r_i, r_i = 1/|z_i[:m]|), so no
    normalised copy of V is made. Memory: the draw, plus `GROUP_BYTES`."""
    for m in m_grid:
        if not 1 <= m <= emb.m_max:
            raise UserError(f"m={m} is outside 1..{emb.m_max} (the nested draw's m_max)")
    out = []
    d = emb.d
    group = max(1, GROUP_BYTES // (32 * d))
    for first in range(0, len(m_grid), group):
        ms = list(m_grid[first : first + group])
        top, k = max(ms), len(ms)
        t = emb.t[:top]
        # the columns between consecutive m of the group: segment sums, then a cumulative sum over them
        cuts = np.asarray(sorted({0, *(m for m in ms if m < top)}))
        at = torch.as_tensor(np.searchsorted(cuts, ms, side="left") - 1)
        r = torch.empty(d, len(cuts), dtype=torch.float64)  # then 1 / |z_i[:m]|, (k, d)
        s = torch.empty(d, len(cuts), dtype=torch.float64)  # then s_i = v_i·θ_m, (k, d)
        for start, z in emb.chunks(top):  # pass 1: prefix norms and products z_i[:m]·t[:m]
            rows = slice(start, start + len(z))
            r[rows] = torch.from_numpy(np.add.reduceat((z * z).numpy(), cuts, axis=1))
            s[rows] = torch.from_numpy(np.add.reduceat((z * t).numpy(), cuts, axis=1))
        r = r.cumsum_(1)[:, at].T.contiguous().sqrt_().clamp_(min=1e-300).reciprocal_()
        s = s.cumsum_(1)[:, at].T.contiguous()
        s *= r / (t * t).cumsum(0)[torch.tensor([m - 1 for m in ms])].sqrt()[:, None]
        gs = torch.empty(2 * k, d, dtype=torch.float64)  # ∂L/∂scores, normalisation folded in
        loss0 = []
        for j in range(k):
            scores = torch.stack([s[j], -s[j]])  # (2, d): θ̃ = −θ
            w = attention_weights(scores, kind)
            ga, gb = population_grad_weights(w[0], w[1], p, q)
            gs[2 * j : 2 * j + 2] = attention_vjp(scores, w, torch.stack([ga, gb]), kind) * r[j]
            loss0.append(float(population_loss(w[0], w[1], p, q)))
        grad = torch.zeros(2 * k, top, dtype=torch.float64)
        for start, z in emb.chunks(top):  # pass 2: ∇θ = gs @ V for every m at once
            grad += gs[:, start : start + len(z)] @ z
        keep = torch.arange(top)[None, :] < torch.tensor(ms).repeat_interleave(2)[:, None]
        grad *= keep  # V_m has m columns: ∇θ_m is zero beyond them
        delta = gs  # reuse: the scores move by −η·delta
        for start, z in emb.chunks(top):  # pass 3: δ = ∇θ @ Vᵀ, row normalisation folded in
            rows = slice(start, start + len(z))
            delta[:, rows] = (grad @ z.T) * r[:, rows].repeat_interleave(2, 0)
        for j, m in enumerate(ms):
            scores = torch.stack([s[j], -s[j]])
            loss, spec, _ = scan_scores(scores, delta[2 * j : 2 * j + 2], etas, kind, p, q)
            out.append(MScan(m, loss, spec, loss0[j]))
    return out


@dataclass
class LadderRow:
    """The finite-sample step on the first n strings: the step size chosen on the training strings
    (grid index), and the population loss and specialisation it gives."""

    n: int
    index: int
    loss: float
    spec: float


def sample_ladder(
    V: Tensor,
    params: Tensor,
    kind: str,
    p: int,
    q: int,
    n_grid: Sequence[int],
    etas: Tensor,
    generator: torch.Generator,
    select: int = 2048,
    stop: Criterion | None = None,
    stop_after: int = 2,
    block: int = 4096,
) -> list[LadderRow]:
    """One finite-sample step on the first n strings of one stream, for each n of the ascending grid.

    Strings x ∈ {±1}^d are drawn on CPU in blocks (device-independent seeds); the gradient is the exact
    mean over the n strings (accumulated block by block). With `stop`, the ladder ends once `stop_after`
    consecutive n succeed under it (later n are not needed to find the first stable success)."""
    if list(n_grid) != sorted(set(n_grid)) or not n_grid or n_grid[0] < 1:
        raise UserError(f"n_grid={list(n_grid)} is invalid; give ascending positive sample sizes")
    d = V.shape[0]
    with torch.no_grad():
        scores = params @ V.T  # (2, d)
        w = attention_weights(scores, kind)
        ab = w.T.contiguous()  # (d, 2): both heads' weights
        total = w.sum(-1)  # (2,)
        sums = torch.zeros(
            d, 2, dtype=V.dtype, device=V.device
        )  # Σ_k x_k·(g_k·u_other,k), per head
        kept: list[Tensor] = []  # the first `select` strings (±1): they choose the step size
        seen, rows, streak = 0, [], 0
        for n in n_grid:
            while seen < n:
                k = min(block, n - seen)
                bits = torch.randint(0, 2, (k, d), generator=generator, dtype=torch.int8)
                # x = 2·bits − 1 is never formed: x·a = 2·(bits·a) − Σa, and xᵀv = 2·bitsᵀv − Σv.
                y = 1.0 - 2.0 * (bits[:, p] == bits[:, q]).to(V.dtype)  # −x_p·x_q
                b01 = bits.to(V.dtype).to(V.device)  # (k, d)
                u = 2.0 * (b01 @ ab) - total  # (k, 2): a·x and b·x
                g = u[:, 0] * u[:, 1] + y.to(V.device)  # f − y = −g
                v = torch.stack([g * u[:, 1], g * u[:, 0]], 1)  # (k, 2)
                sums += 2.0 * (b01.T @ v) - v.sum(0)
                if sum(len(t) for t in kept) < select:
                    kept.append(2.0 * b01[: select - sum(len(t) for t in kept)] - 1.0)
                seen += k
            # ∂L_n/∂a = (2/n)·Σ_k g_k (b·x_k) x_k (`sample_grad_weights`), both heads at once
            grad_w = (2.0 / n) * sums.T
            gs = attention_vjp(scores, w, grad_w, kind)
            delta = (gs @ V) @ V.T  # (2, d)
            xs = torch.cat(kept)[: min(select, n)]
            ys = -xs[:, p] * xs[:, q]
            loss, spec, sel = scan_scores(scores, delta, etas, kind, p, q, xs, ys)
            assert sel is not None
            i = int(sel.argmin())
            row = LadderRow(n, i, float(loss[i]), float(spec[i]))
            rows.append(row)
            if stop is not None:
                ok = bool(stop(torch.tensor(row.loss), torch.tensor(row.spec)))
                streak = streak + 1 if ok else 0
                if streak >= stop_after:
                    break
    return rows


def finite(v: float) -> float | None:
    """JSON-safe: None for a non-finite number."""
    return v if math.isfinite(v) else None


__all__ = [
    "CACHE_BYTES",
    "ROWS",
    "LadderRow",
    "MScan",
    "NestedEmbeddings",
    "finite",
    "nested_m_scan",
    "sample_ladder",
]  # fmt: skip
