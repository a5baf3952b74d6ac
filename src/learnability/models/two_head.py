r"""The two-head attention model of Han & Ghoshdastidar (2025) for sparse XOR, and its population loss.

Task: x uniform on {±1}^d, target y = −x_p x_q for a hidden support {p, q} = {i*, j*} (0-based positions).

Model (`TwoHead`): fixed positional embeddings V = [v_0; …; v_{d−1}] ∈ ℝ^{d×m}, rows uniform on S^{m−1};
two learnable query vectors θ, θ̃ ∈ ℝ^m (2m trainable parameters); per-head attention weights
a = σ(Vθ), b = σ(Vθ̃) ∈ ℝ^d; output f(x) = −(a·x)(b·x). Initialisation: θ uniform on S^{m−1}, θ̃ = −θ.

Attention kinds σ (applied to the scores s = Vθ ∈ ℝ^d):
- ``softmax``:  a_i = exp(s_i) / Σ_j exp(s_j)  (the paper's model),
- ``linear``:   a_i = s_i                      (scores used as weights, no normalisation),
- ``erf``:      a_i = erf(s_i)                 (element-wise, no normalisation over positions),
- ``sigmoid``:  a_i = sigmoid(s_i − log d)     (element-wise; the −log d bias, as in sigmoid-attention
  practice, makes the initial weights ≈ 1/d like softmax's so the comparison starts from the same place),
- ``linear_norm``: a_i = s_i / d               (linear, scaled by 1/d like softmax's weights),
- ``erf_norm``:    a_i = erf(s_i) / d          (element-wise erf, scaled by 1/d).
Unscaled, linear and erf weights are O(1) at each of the d positions, so the output starts O(d/m) and the
loss at initialisation is in the hundreds at d = 512; the 1/d versions start, like softmax, at a loss ≈ 1.
The paper names linear and element-wise (erf) attention without fixing their scale; these choices are the
project's own and are stated in the report.

Tokens: the models' contract takes bit tokens (B, d) in {0, 1}; bit t maps to x = 2t − 1 ∈ {±1}
(`forward_pm` takes ±1 floats directly).

Loss: mean squared error L = E_x (f(x) − y)²  (no factor ½; a step size η means θ ← θ − η ∇_θ L).

Closed-form population loss (derivation). Write g(x) = (a·x)(b·x) − x_p x_q, so f − y = −g and L = E g².
For uniform ±1 bits E[x_i x_j x_k x_l] = [i=j][k=l] + [i=k][j=l] + [i=l][j=k] − 2[i=j=k=l]
(the pairings, with the all-equal case counted three times instead of once). Hence
  E[(a·x)²(b·x)²] = Σ_{ijkl} a_i a_j b_k b_l E[x_i x_j x_k x_l] = |a|²|b|² + 2(a·b)² − 2 Σ_i a_i² b_i²,
  E[(a·x)(b·x) x_p x_q] = Σ_{ij} a_i b_j E[x_i x_j x_p x_q] = a_p b_q + a_q b_p          (p ≠ q),
  E[(x_p x_q)²] = 1,
so  L(a, b) = |a|²|b|² + 2(a·b)² − 2 Σ_i a_i² b_i² − 2(a_p b_q + a_q b_p) + 1,
an O(d) polynomial in the attention weights, and its gradient in the weights is
  ∂L/∂a_i = 2 a_i |b|² + 4 (a·b) b_i − 4 a_i b_i² − 2([i=p] b_q + [i=q] b_p),  and symmetrically in b.
The chain rule through σ is one vector–Jacobian product (softmax: a ⊙ (g − a·g); element-wise: σ'(s) ⊙ g) and
one product with Vᵀ, so ∇_θ L costs O(dm) — two passes over the embeddings, the same as the forward pass.

Finite-sample version: L_n = (1/n) Σ_k (f(x_k) − y_k)², with ∂L_n/∂a = (2/n) Σ_k g_k (b·x_k) x_k, O(ndm).

Equivalence (`cls_transformer_forward`): the softmax model is a standard one-layer two-head attention layer on
the sequence [CLS, x_0, …, x_{d−1}] with token embedding e_k = (x_k, v_k, 0) and e_CLS = (0, 0, 1), query
W_Q^h = θ_h e_CLSᵀ (reads the CLS flag), key W_K = projection on the position block, value W_V = projection on
the content coordinate, a structured mask letting the CLS query see only the d bit positions, and the readout
−o_1 o_2 of the two heads' CLS outputs. The test checks outputs and θ-gradients agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from learnability.device import resolve_device
from learnability.errors import UserError, check_choice
from learnability.models.trace import Trace

AttentionKind = Literal["softmax", "linear", "erf", "sigmoid", "linear_norm", "erf_norm"]
ATTENTION_KINDS: tuple[str, ...] = (
    "softmax",
    "linear",
    "erf",
    "sigmoid",
    "linear_norm",
    "erf_norm",
)


@dataclass
class TwoHeadConfig:
    """The two-head sparse-XOR model. `support` None = drawn from `support_seed` (distinct, uniform)."""

    arch: Literal["two_head"] = "two_head"  # the two-head sparse-XOR model (Han & Ghoshdastidar)
    d: int = 64  # sequence length (number of bits)
    m: int = 16  # embedding dimension; trainable parameters = 2m
    attention: AttentionKind = "softmax"  # σ of the attention weights (module docstring)
    support: list[int] | None = None  # [i*, j*], 0-based, for the population loss (None = drawn)
    embedding_seed: int = 0  # positional embeddings v_i
    init_seed: int = 0  # θ on the sphere
    support_seed: int = 0  # draws the support when `support` is None


def validate_config(config: TwoHeadConfig) -> tuple[int, int]:
    """Check the config; return the support (p, q)."""
    check_choice("attention kind", config.attention, ATTENTION_KINDS)
    if not isinstance(config.d, int) or config.d < 2:
        raise UserError(f"d={config.d!r} is invalid; sparse XOR needs an integer d >= 2")
    if not isinstance(config.m, int) or config.m < 1:
        raise UserError(
            f"m={config.m!r} is invalid; the embedding dimension must be an integer >= 1"
        )
    if config.support is None:
        return draw_support(config.d, config.support_seed)
    return check_support(config.support, config.d)


def check_support(support: Sequence[int], d: int) -> tuple[int, int]:
    """Two distinct 0-based positions in [0, d)."""
    s = list(support)
    if len(s) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in s):
        raise UserError(
            f"support={s!r} is invalid; give two distinct integer positions in [0, {d})"
        )
    p, q = s
    if not (0 <= p < d and 0 <= q < d) or p == q:
        raise UserError(
            f"support={s!r} is invalid; give two distinct integer positions in [0, {d})"
        )
    return p, q


def draw_support(d: int, seed: int) -> tuple[int, int]:
    g = torch.Generator().manual_seed(int(seed))
    p, q = torch.randperm(d, generator=g, device="cpu")[:2].tolist()
    return int(p), int(q)


def sphere(n: int, m: int, generator: torch.Generator, dtype=torch.float64) -> Tensor:
    """(n, m) rows uniform on S^{m−1} (normalised Gaussians), drawn on CPU for device-independent seeds."""
    # device="cpu" even under a `torch.device("meta")` context (checkpoints list names on meta)
    z = torch.randn(n, m, generator=generator, dtype=dtype, device="cpu")
    return z / z.norm(dim=1, keepdim=True).clamp_min(1e-300)


def attention_weights(scores: Tensor, kind: str) -> Tensor:
    """Weights (..., d) from scores (..., d) for one attention kind (see module docstring)."""
    d = scores.shape[-1]
    if kind == "softmax":
        return torch.softmax(scores, dim=-1)
    if kind == "linear":
        return scores
    if kind == "erf":
        return torch.erf(scores)
    if kind == "sigmoid":
        return torch.sigmoid(scores - math.log(d))
    if kind == "linear_norm":
        return scores / d
    if kind == "erf_norm":
        return torch.erf(scores) / d
    check_choice("attention kind", kind, ATTENTION_KINDS)
    raise AssertionError  # unreachable


def attention_vjp(scores: Tensor, weights: Tensor, grad: Tensor, kind: str) -> Tensor:
    """∂L/∂scores from ∂L/∂weights `grad` (..., d): the vector–Jacobian product of `attention_weights`."""
    if kind == "softmax":
        return weights * (grad - (weights * grad).sum(-1, keepdim=True))
    if kind == "linear":
        return grad
    if kind == "erf":
        return (2.0 / math.sqrt(math.pi)) * torch.exp(-scores * scores) * grad
    if kind == "sigmoid":
        return weights * (1 - weights) * grad
    d = scores.shape[-1]
    if kind == "linear_norm":
        return grad / d
    if kind == "erf_norm":
        return (2.0 / math.sqrt(math.pi) / d) * torch.exp(-scores * scores) * grad
    check_choice("attention kind", kind, ATTENTION_KINDS)
    raise AssertionError  # unreachable


def population_loss(a: Tensor, b: Tensor, p: int, q: int) -> Tensor:
    """Closed-form E_x (f(x) − y)² for weights a, b (..., d); returns (...). O(d)."""
    prod = a * b
    # dot products by einsum: one pass each and no d-sized temporaries (the m scan calls this O(G·M) times)
    aa, bb = torch.einsum("...i,...i->...", a, a), torch.einsum("...i,...i->...", b, b)
    ab, cross = prod.sum(-1), torch.einsum("...i,...i->...", prod, prod)
    hit = a[..., p] * b[..., q] + a[..., q] * b[..., p]
    return aa * bb + 2 * ab * ab - 2 * cross - 2 * hit + 1


def population_grad_weights(a: Tensor, b: Tensor, p: int, q: int) -> tuple[Tensor, Tensor]:
    """Closed-form (∂L/∂a, ∂L/∂b), each (..., d)."""
    aa, bb = (a * a).sum(-1, keepdim=True), (b * b).sum(-1, keepdim=True)
    ab = (a * b).sum(-1, keepdim=True)
    ga = 2 * a * bb + 4 * ab * b - 4 * a * b * b
    gb = 2 * b * aa + 4 * ab * a - 4 * b * a * a
    ga[..., p] -= 2 * b[..., q]
    ga[..., q] -= 2 * b[..., p]
    gb[..., p] -= 2 * a[..., q]
    gb[..., q] -= 2 * a[..., p]
    return ga, gb


def sample_grad_weights(
    a: Tensor, b: Tensor, x: Tensor, y: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Finite-sample loss and (∂L_n/∂a, ∂L_n/∂b) for ±1 inputs x (n, d), targets y (n,); a, b (d,)."""
    ua, ub = x @ a, x @ b
    g = ua * ub + y  # (f − y) = −g with f = −ua·ub
    n = x.shape[0]
    return (g * g).mean(), (2.0 / n) * (x.T @ (g * ub)), (2.0 / n) * (x.T @ (g * ua))


class TwoHead(nn.Module):
    """f(x) = −(σ(Vθ)·x)(σ(Vθ̃)·x). Buffers: `position_embedding.weight` V (d, m); parameters θ, θ̃ (m,)."""

    # V is part of the model's definition, not a weight: no freeze spec of the trainer trains it
    fixed_parameters: tuple[str, ...] = ("position_embedding.weight",)

    def __init__(self, config: TwoHeadConfig, device: str | torch.device | None = "cpu",
                 dtype: torch.dtype = torch.float64) -> None:  # fmt: skip
        super().__init__()
        self.config = config
        self.support = validate_config(config)
        dev = resolve_device(device or "cpu")
        v = sphere(config.d, config.m, torch.Generator().manual_seed(config.embedding_seed), dtype)
        theta = sphere(1, config.m, torch.Generator().manual_seed(config.init_seed), dtype)[0]
        # Fixed, not trained; from_pretrained draws nothing from the global RNG.
        self.position_embedding = nn.Embedding.from_pretrained(v.to(dev), freeze=True)
        self.theta = nn.Parameter(theta.to(dev))
        self.theta_tilde = nn.Parameter(-theta.to(dev))

    @property
    def V(self) -> Tensor:
        return self.position_embedding.weight

    def positional_parameter_names(self) -> set[str]:
        return {"position_embedding.weight"}

    def weights(self) -> tuple[Tensor, Tensor]:
        """Attention weights (a, b), each (d,)."""
        s = self.V @ torch.stack([self.theta, self.theta_tilde], 1)  # (d, 2)
        w = attention_weights(s.T, self.config.attention)
        return w[0], w[1]

    def forward_pm(self, x: Tensor) -> Tensor:
        """x (B, d) in ±1 → f(x) (B,)."""
        a, b = self.weights()
        x = x.to(a.dtype)
        return -(x @ a) * (x @ b)

    def forward(self, tokens: Tensor, trace: bool = False):
        """tokens (B, d) in {0,1} → (B,); with trace, also a Trace whose attentions are (B, 2, 1, d)."""
        if tokens.dim() != 2 or tokens.shape[1] != self.config.d:
            raise UserError(
                f"input shape {tuple(tokens.shape)} is invalid; the two-head model takes (B, {self.config.d}) bits"
            )
        x = 2.0 * tokens.to(self.V.dtype) - 1.0
        out = self.forward_pm(x)
        if not trace:
            return out

        a, b = self.weights()
        att = torch.stack([a, b]).view(1, 2, 1, -1).expand(x.shape[0], 2, 1, -1)
        return out, Trace(attentions=[att])

    def population_loss(self) -> Tensor:
        a, b = self.weights()
        return population_loss(a, b, *self.support)


@dataclass
class StepState:
    """Scores and weights of both heads: s, w are (2, d); params (2, m) = [θ; θ̃]."""

    params: Tensor
    scores: Tensor
    weights: Tensor


def state(V: Tensor, params: Tensor, kind: str) -> StepState:
    s = params @ V.T  # (..., 2, d)
    return StepState(params, s, attention_weights(s, kind))


def population_grad(V: Tensor, params: Tensor, kind: str, p: int, q: int) -> tuple[Tensor, Tensor]:
    """Closed-form population loss (...) and its gradient (..., 2, m) w.r.t. params = [θ; θ̃] (..., 2, m).

    O(dm) per parameter pair: the scores Vθ, the O(d) closed form, one product with V."""
    st = state(V, params, kind)
    a, b = st.weights[..., 0, :], st.weights[..., 1, :]
    loss = population_loss(a, b, p, q)
    ga, gb = population_grad_weights(a, b, p, q)
    gs = attention_vjp(st.scores, st.weights, torch.stack([ga, gb], -2), kind)
    return loss, gs @ V


def sample_grad(
    V: Tensor, params: Tensor, kind: str, x: Tensor, y: Tensor
) -> tuple[Tensor, Tensor]:
    """Finite-sample loss () and its gradient (2, m) on ±1 inputs x (n, d) and targets y (n,)."""
    st = state(V, params, kind)
    loss, ga, gb = sample_grad_weights(st.weights[0], st.weights[1], x, y)
    gs = attention_vjp(st.scores, st.weights, torch.stack([ga, gb]), kind)
    return loss, gs @ V


def sample_loss(weights: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """Finite-sample MSE for a batch of weight pairs: weights (..., 2, d), x (n, d), y (n,) → (...)."""
    u = weights @ x.T  # (..., 2, n)
    g = u[..., 0, :] * u[..., 1, :] + y
    return (g * g).mean(-1)


def head_masses(weights: Tensor, p: int, q: int) -> Tensor:
    """Attention mass on the targets: (..., 2, 2) = [[a_p, a_q], [b_p, b_q]] from weights (..., 2, d)."""
    return weights[..., [p, q]]


def worst_case_error(weights: Tensor, p: int, q: int) -> Tensor:
    """An upper bound on max_x |f(x) − y(x)| over all 2^d inputs, O(d): (...) from weights (..., 2, d).

    a·x = a_p x_p + a_q x_q + r_a with |r_a| ≤ ρ_a = Σ_{i∉{p,q}} |a_i| (same for b); the error
    |(a·x)(b·x) − x_p x_q| is bilinear in (r_a, r_b), so its maximum over the box lies at a corner; the bound
    takes the maximum over the 4 signs of (x_p, x_q) and the 4 corners (it ignores that r_a and r_b share x).
    """
    absw = weights.abs()
    rho = absw.sum(-1) - absw[..., p] - absw[..., q]  # (..., 2)
    best = torch.zeros(weights.shape[:-2], dtype=weights.dtype, device=weights.device)
    for xp in (-1.0, 1.0):
        for xq in (-1.0, 1.0):
            ua = weights[..., 0, p] * xp + weights[..., 0, q] * xq
            ub = weights[..., 1, p] * xp + weights[..., 1, q] * xq
            for sa in (-1.0, 1.0):
                for sb in (-1.0, 1.0):
                    e = ((ua + sa * rho[..., 0]) * (ub + sb * rho[..., 1]) - xp * xq).abs()
                    best = torch.maximum(best, e)
    return best


def sign_accuracy(weights: Tensor, p: int, q: int, n: int, generator: torch.Generator) -> float:
    """Monte Carlo P(sign f(x) = y) on n uniform strings; weights (2, d). Ties (f = 0) count as wrong.

    Strings are drawn on CPU (device-independent seeds) in chunks of at most 2^22 bits."""
    d = weights.shape[-1]
    chunk = max(1, 2**22 // d)
    right = 0
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        x = (torch.randint(0, 2, (k, d), generator=generator, dtype=torch.int8) * 2 - 1).to(weights)
        u = x @ weights.T  # (k, 2)
        f = -u[:, 0] * u[:, 1]
        y = -x[:, p] * x[:, q]
        right += int((torch.sign(f) == y).sum())
    return right / n


def enumerate_inputs(d: int, dtype=torch.float64, device=None) -> Tensor:
    """All 2^d strings as ±1 (2^d, d), in the project's bit order (bit k of the index is x_k)."""
    idx = torch.arange(2**d, device=device)
    bits = (idx.unsqueeze(1) >> torch.arange(d, device=device)) & 1
    return (2 * bits - 1).to(dtype)


def cls_transformer_forward(x: Tensor, V: Tensor, theta: Tensor, theta_tilde: Tensor) -> Tensor:
    """The softmax model as a standard 1-layer, 2-head attention layer with a CLS token (see docstring).

    x (B, d) ±1, V (d, m), θ and θ̃ (m,) → (B,). Uses `scaled_dot_product_attention` with scale 1 and a mask.
    """
    B, d = x.shape
    m = V.shape[1]
    D = m + 2  # [content | position (m) | CLS flag]
    emb = torch.zeros(B, d + 1, D, dtype=V.dtype, device=V.device)
    emb[:, 0, D - 1] = 1.0  # CLS
    emb[:, 1:, 0] = x.to(V.dtype)
    emb[:, 1:, 1 : m + 1] = V
    eye = torch.zeros(m, D, dtype=V.dtype, device=V.device)
    eye[:, 1 : m + 1] = torch.eye(m, dtype=V.dtype, device=V.device)
    flag = torch.zeros(D, dtype=V.dtype, device=V.device)
    flag[D - 1] = 1.0
    Wq = torch.stack([torch.outer(theta, flag), torch.outer(theta_tilde, flag)])  # (2, m, D)
    Wk = eye.expand(2, m, D)
    Wv = torch.zeros(2, 1, D, dtype=V.dtype, device=V.device)
    Wv[:, 0, 0] = 1.0
    Q = torch.einsum("btd,hkd->bhtk", emb, Wq)
    K = torch.einsum("btd,hkd->bhtk", emb, Wk)
    Vv = torch.einsum("btd,hkd->bhtk", emb, Wv)
    # Structured mask: every query sees the bit positions only (never the CLS token itself).
    mask = torch.ones(d + 1, d + 1, dtype=torch.bool, device=V.device)
    mask[:, 0] = False
    out = F.scaled_dot_product_attention(Q, K, Vv, attn_mask=mask, scale=1.0)  # (B, 2, d+1, 1)
    o = out[:, :, 0, 0]  # the CLS row of each head
    return -o[:, 0] * o[:, 1]
