"""Average-direction sharpness: → 0 with ρ, ρ² scaling, positional parameters unperturbed, fresh directions."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from learnability.errors import UserError
from learnability.measure import sharpness
from learnability.models import BooleanTransformerConfig, build_model
from learnability.tasks.base import Batch


@pytest.fixture(scope="module")
def setup():
    model = build_model(
        BooleanTransformerConfig(n_layers=2, n_heads=2, d_model=8, d_ff=8, max_len=6), seed=0
    )
    model = model.double()
    x = torch.randint(0, 2, (64, 6), generator=torch.Generator().manual_seed(0))
    return model, Batch(x, (x.sum(1) % 2).double())


def sharp(model, batch, rho, seed=0, **kw):
    return sharpness(
        model, batch, rho=rho, directions=8, generator=torch.Generator().manual_seed(seed), **kw
    )


def test_zero_radius_and_rho_squared_scaling(setup):
    model, batch = setup
    assert sharp(model, batch, 0.0).mean == 0.0
    small, double = sharp(model, batch, 1e-4).mean, sharp(model, batch, 2e-4).mean
    assert small > 0
    assert double / small == pytest.approx(4.0, rel=0.02)  # same directions: quadratic in ρ
    assert sharp(model, batch, 1e-5).mean < 1e-3 * sharp(model, batch, 1e-2).mean


def test_gaussian_variant_and_ci(setup):
    model, batch = setup
    assert sharp(model, batch, 0.0, kind="gaussian").mean == 0.0
    est = sharp(model, batch, 0.02, kind="gaussian")
    assert est.n == 8 and est.ci_low <= est.mean <= est.ci_high
    q = sharp(model, batch, 1e-4, kind="gaussian", quantity="output").mean
    assert q == pytest.approx(
        sharp(model, batch, 2e-4, kind="gaussian", quantity="output").mean / 4, rel=0.02
    )


def test_directions_are_fresh_across_calls_and_seeded(setup):
    model, batch = setup
    g = torch.Generator().manual_seed(5)
    first = sharpness(model, batch, rho=0.1, directions=4, generator=g).mean
    second = sharpness(model, batch, rho=0.1, directions=4, generator=g).mean
    assert first != second  # not re-seeded per call
    assert sharp(model, batch, 0.1, seed=5).mean == sharp(model, batch, 0.1, seed=5).mean


def test_parameters_untouched_and_vmap_path_agrees(setup):
    model, batch = setup
    before = {n: p.clone() for n, p in model.state_dict().items()}
    loop = sharp(model, batch, 0.05, chunk=1).mean
    vec = sharp(model, batch, 0.05, chunk=4).mean
    assert vec == pytest.approx(loop, rel=1e-9)
    assert all(torch.equal(before[n], p) for n, p in model.state_dict().items())


class OnlyPositions(nn.Module):
    """Output depends only on the positional parameter; `w` is non-positional but has no effect."""

    def __init__(self):
        super().__init__()
        self.position_embedding = nn.Parameter(torch.ones(3))
        self.w = nn.Parameter(torch.zeros(3))

    def positional_parameter_names(self):
        return {"position_embedding"}

    def forward(self, tokens):
        return (self.position_embedding.sum() + 0 * self.w.sum()).expand(tokens.shape[0])


def test_positional_parameters_are_not_perturbed():
    x = torch.zeros(4, 2, dtype=torch.long)
    est = sharpness(OnlyPositions(), Batch(x, torch.zeros(4)), rho=1.0, directions=4)
    assert est.mean == 0.0


def test_bad_arguments(setup):
    model, batch = setup
    with pytest.raises(UserError):
        sharp(model, batch, -1.0)
    with pytest.raises(UserError):
        sharp(model, batch, 0.1, kind="ball")
