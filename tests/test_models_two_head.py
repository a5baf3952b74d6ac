"""Two-head sparse-XOR model: closed-form population loss and gradient against exhaustive enumeration,
autograd and Monte Carlo; the CLS-transformer equivalence; one-step success; input validation."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.errors import UserError
from learnability.models.two_head import (
    ATTENTION_KINDS,
    TwoHead,
    TwoHeadConfig,
    attention_weights,
    cls_transformer_forward,
    enumerate_inputs,
    head_masses,
    population_grad,
    population_loss,
    sample_grad,
    sign_accuracy,
    worst_case_error,
)


def _model(d: int, m: int, kind: str = "softmax", seed: int = 0, support=None) -> TwoHead:
    return TwoHead(TwoHeadConfig(d=d, m=m, attention=kind, support=support, embedding_seed=seed,
                                 init_seed=seed + 1, support_seed=seed))  # fmt: skip


def _perturbed(model: TwoHead, seed: int) -> torch.Tensor:
    # Away from θ̃ = −θ and with larger scores, so every term of the closed form is exercised.
    g = torch.Generator().manual_seed(seed)
    return torch.stack([model.theta, model.theta_tilde]).detach() * 2 + torch.randn(
        2, model.config.m, generator=g, dtype=torch.float64
    )


@pytest.mark.parametrize("kind", ATTENTION_KINDS)
@pytest.mark.parametrize("d", [2, 5, 12])
def test_closed_form_matches_enumeration(kind: str, d: int) -> None:
    model = _model(d, 4, kind, seed=d)
    p, q = model.support
    params = _perturbed(model, d).requires_grad_(True)
    x = enumerate_inputs(d)
    y = -x[:, p] * x[:, q]
    w = attention_weights(params @ model.V.T, kind)
    exact = ((-(x @ w[0]) * (x @ w[1]) - y) ** 2).mean()
    closed = population_loss(w[0], w[1], p, q)
    assert abs(float((exact - closed).detach())) < 1e-10 * max(1.0, float(exact.detach()))
    (auto,) = torch.autograd.grad(exact, params)
    loss, grad = population_grad(model.V, params.detach(), kind, p, q)
    assert abs(float(loss - exact.detach())) < 1e-10 * max(1.0, float(exact.detach()))
    assert torch.allclose(grad, auto, atol=1e-10, rtol=1e-9)
    # The finite-sample gradient on all 2^d strings is the population gradient.
    _, sgrad = sample_grad(model.V, params.detach(), kind, x, y)
    assert torch.allclose(sgrad, auto, atol=1e-10, rtol=1e-9)


def test_model_population_loss_at_init_and_forward_tokens() -> None:
    model = _model(10, 6)
    x = enumerate_inputs(10)
    tokens = ((x + 1) / 2).long()
    p, q = model.support
    out = model(tokens)
    assert out.shape == (1024,)
    exact = ((out + x[:, p] * x[:, q]) ** 2).mean()
    assert abs(float((exact - model.population_loss()).detach())) < 1e-12
    _out2, trace = model(tokens[:3], trace=True)
    assert trace.attentions[0].shape == (3, 2, 1, 10)
    assert torch.allclose(trace.attentions[0].sum(-1), torch.ones(3, 2, 1, dtype=torch.float64))


def test_monte_carlo_agrees_at_large_d() -> None:
    d, m, n = 4096, 24, 4000
    model = _model(d, m, seed=3)
    p, q = model.support
    params = _perturbed(model, 3) * 3
    g = torch.Generator().manual_seed(0)
    x = (torch.randint(0, 2, (n, d), generator=g) * 2 - 1).double()
    y = -x[:, p] * x[:, q]
    loss, _grad = population_grad(model.V, params, "softmax", p, q)
    mc_loss, _ = sample_grad(model.V, params, "softmax", x, y)
    # Per-sample losses are bounded here (|f| ≤ 1, |y| = 1): the MC error is ≤ 4/√n at 4 sigma.
    assert abs(float(mc_loss - loss)) < 4 * 2 / math.sqrt(n)


def test_cls_transformer_equivalence() -> None:
    model = _model(9, 5, seed=2)
    g = torch.Generator().manual_seed(1)
    x = (torch.randint(0, 2, (7, 9), generator=g) * 2 - 1).double()
    th = model.theta.detach().clone().requires_grad_(True)
    tt = model.theta_tilde.detach().clone().requires_grad_(True)
    ref = model.forward_pm(x)
    alt = cls_transformer_forward(x, model.V, th, tt)
    assert torch.allclose(ref, alt, atol=1e-12)
    (alt**2).sum().backward()
    (ref**2).sum().backward()
    assert torch.allclose(th.grad, model.theta.grad, atol=1e-12)
    assert torch.allclose(tt.grad, model.theta_tilde.grad, atol=1e-12)


def test_one_step_softmax_succeeds_at_small_d() -> None:
    d, m = 64, 40
    wins = 0
    for seed in range(5):
        model = _model(d, m, seed=seed)
        p, q = model.support
        params = torch.stack([model.theta, model.theta_tilde]).detach()
        loss0, grad = population_grad(model.V, params, "softmax", p, q)
        assert 0.9 < float(loss0) <= 1.0 + 1e-9  # near the zero predictor at init
        etas = torch.logspace(0, 8, 65, dtype=torch.float64)
        new = params - etas[:, None, None] * grad
        w = attention_weights(new @ model.V.T, "softmax")
        losses = population_loss(w[:, 0], w[:, 1], p, q)
        best = int(losses.argmin())
        masses = head_masses(w[best], p, q)  # [[a_p, a_q], [b_p, b_q]]
        distinct = max(masses[0, 0] * masses[1, 1], masses[0, 1] * masses[1, 0])
        if float(losses[best]) < 0.05 and float(distinct) > 0.8:
            wins += 1
            assert float(worst_case_error(w[best], p, q)) < 1.0
            acc = sign_accuracy(w[best], p, q, 512, torch.Generator().manual_seed(0))
            assert acc > 0.99
    assert wins >= 4


def test_validation() -> None:
    with pytest.raises(UserError, match="attention kind"):
        _model(8, 4, kind="softmaxx")
    with pytest.raises(UserError, match="support"):
        _model(8, 4, support=[3, 3])
    with pytest.raises(UserError, match="support"):
        _model(8, 4, support=[0, 8])
    with pytest.raises(UserError, match="support"):
        _model(8, 4, support=[1])
    with pytest.raises(UserError, match="d="):
        TwoHead(TwoHeadConfig(d=1, m=3))
    with pytest.raises(UserError, match="input shape"):
        _model(8, 4)(torch.zeros(2, 7, dtype=torch.long))


def test_worst_case_bound_holds() -> None:
    model = _model(10, 4, seed=5)
    p, q = model.support
    params = _perturbed(model, 5)
    w = attention_weights(params @ model.V.T, "softmax")
    x = enumerate_inputs(10)
    err = (-(x @ w[0]) * (x @ w[1]) + x[:, p] * x[:, q]).abs().max()
    assert float(err) <= float(worst_case_error(w, p, q)) + 1e-12


def test_build_leaves_global_rng_alone_and_is_seeded() -> None:
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = _model(32, 8, seed=4)
    after = torch.rand(1)
    assert torch.equal(before, after)
    b = _model(32, 8, seed=4)
    assert torch.equal(a.V, b.V) and torch.equal(a.theta, b.theta) and a.support == b.support
    assert torch.allclose(a.V.norm(dim=1), torch.ones(32, dtype=torch.float64))
    assert torch.equal(a.theta_tilde, -a.theta)
    trainable = {n for n, p in a.named_parameters() if p.requires_grad}
    assert not a.V.requires_grad and trainable == {"theta", "theta_tilde"}


def test_scaled_kinds_are_the_unscaled_ones_over_d_and_start_at_the_zero_predictor() -> None:
    model = _model(512, 41, seed=3)
    p, q = model.support
    s = torch.stack([model.theta, model.theta_tilde]).detach() @ model.V.T
    assert torch.allclose(attention_weights(s, "linear_norm"), attention_weights(s, "linear") / 512)
    assert torch.allclose(attention_weights(s, "erf_norm"), attention_weights(s, "erf") / 512)
    for kind, lo, hi in (("linear", 100, 2000), ("erf", 100, 2000), ("linear_norm", 0.99, 1.01),
                         ("erf_norm", 0.99, 1.01), ("softmax", 0.99, 1.01)):  # fmt: skip
        w = attention_weights(s, kind)
        assert lo < float(population_loss(w[0], w[1], p, q)) < hi, kind
