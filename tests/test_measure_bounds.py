"""learnability.measure.bounds: the corrected Lipschitz constant on a hand-computed tiny model, the
ρ-grid bound radius on a synthetic model whose sharpness is known in closed form, and as(T) of real
outputs against Boolean closed forms."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from learnability.boolean import majority, parity
from learnability.errors import UserError
from learnability.measure import lipschitz_constant
from learnability.measure.bounds import (
    attention_input_gains,
    bound_radius,
    lipschitz_scaled,
    real_average_sensitivity,
    sampled_real_sensitivity,
    sharpness_profile,
)
from learnability.models import BooleanTransformerConfig, build_model
from learnability.tasks.base import Batch


def _tiny(ln: str = "post") -> nn.Module:
    """d = 4, 2 heads (d_h = 2), 2 layers; layer 2's head 0 has Q = [e0; e1], K = [2·e0; 0], head 1 zero;
    the LayerNorm feeding layer 2 has gain γ = (3, 1, 1, 1)."""
    model = build_model(
        BooleanTransformerConfig(d_model=4, d_ff=4, n_heads=2, n_layers=2, ln=ln), seed=0
    )
    with torch.no_grad():
        for block in model.layers:
            block.attn.in_proj.weight.zero_()
        w = model.layers[
            1
        ].attn.in_proj.weight  # rows: q (4) | k (4) | v (4); head h = rows 2h, 2h+1
        w[0, 0], w[1, 1] = 1.0, 1.0  # Q of head 0
        w[4, 0] = 2.0  # K of head 0
        gain = model.layers[0].ln2.weight if ln == "post" else model.layers[1].ln1.weight
        gain.copy_(torch.tensor([3.0, 1.0, 1.0, 1.0]))
    return model


def test_corrected_lipschitz_constant_on_a_hand_computed_model():
    # KᵀQ of head 0 has one non-zero entry, (0, 0) = 2·1 = 2; Γ KᵀQ Γ: 2·3·3 = 18, spectral norm 18.
    # log C = 4d · ‖ΓKᵀQΓ‖² / d_h = 4·4·18²/2 = 2592 (head 1 is zero; layer 1 is not summed)
    for ln in ("post", "pre"):
        c = lipschitz_scaled(_tiny(ln))
        assert c["log_C"] == pytest.approx(2592.0)
        assert c["log10_C"] == pytest.approx(2592.0 / math.log(10))
    # the uncorrected constant of the spec: 4d · ‖KᵀQ‖² = 4·4·2² = 64
    assert lipschitz_constant(_tiny())["log_C"] == pytest.approx(64.0)


def test_gains_follow_the_layernorm_placement():
    post = attention_input_gains(_tiny("post"))
    assert post[0] is None and post[1].tolist() == [3.0, 1.0, 1.0, 1.0]
    pre = attention_input_gains(_tiny("pre"))
    assert pre[1].tolist() == [3.0, 1.0, 1.0, 1.0]
    none = build_model(BooleanTransformerConfig(d_model=4, d_ff=4, ln="none"), seed=0)
    assert attention_input_gains(none) == [None, None]
    with pytest.raises(UserError):
        attention_input_gains(nn.Linear(2, 2))


class Linear(nn.Module):
    """T(x) = w·φ(x) with fixed features φ = inputs (B, P) as floats: L_ρ = ρ² E‖φ‖²/P in expectation."""

    def __init__(self, p: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(p, generator=torch.Generator().manual_seed(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float() @ self.w


def test_bound_radius_on_a_synthetic_model_with_a_known_profile():
    p = 12
    x = torch.randint(0, 2, (64, p), generator=torch.Generator().manual_seed(0))
    batch = Batch(x, torch.zeros(64))
    radii = [0.25, 0.5, 1.0, 2.0, 4.0]
    profile = sharpness_profile(Linear(p), batch, radii, directions=400, seed=3)
    # the same directions at every radius: L_ρ/ρ² is one number, to rounding
    curvature = [e.mean / r**2 for e, r in zip(profile, radii)]
    assert max(curvature) == pytest.approx(min(curvature), rel=1e-6)
    # and it is E‖φ‖²/P (here E‖φ‖² = mean number of ones) up to the direction sample
    assert curvature[0] == pytest.approx(float(x.float().pow(2).sum(1).mean()) / p, rel=0.15)
    # where L_ρ = c ρ² meets a target, ρ* = √(target / c) exactly (log–log interpolation of a power law)
    c = curvature[0]
    for target in (c * 0.5**2, c * 0.7**2, c * 3.0**2):
        hit = bound_radius(radii, [e.mean for e in profile], target)
        assert hit.status == "crossed" and hit.radius == pytest.approx(
            math.sqrt(target / c), rel=1e-6
        )
    assert bound_radius(radii, [e.mean for e in profile], c * 0.01).status == "at_smallest"
    beyond = bound_radius(radii, [e.mean for e in profile], c * 100)
    assert beyond.status == "beyond_largest" and beyond.radius == 4.0


def test_bound_radius_rejects_bad_grids():
    with pytest.raises(UserError):
        bound_radius([1.0, 0.5], [0.1, 0.2], 0.15)
    with pytest.raises(UserError):
        bound_radius([0.5, 1.0], [0.1], 0.15)
    with pytest.raises(UserError):
        bound_radius([0.5, 1.0], [0.1, 0.2], 0.0)
    # a non-positive value below the crossing: linear interpolation in ρ
    assert bound_radius([1.0, 2.0], [0.0, 1.0], 0.5).radius == pytest.approx(1.5)


def test_real_average_sensitivity_matches_boolean_closed_forms():
    n = 7
    tt = torch.as_tensor(parity(n).truth_table(), dtype=torch.float64)
    assert real_average_sensitivity(tt, n) == pytest.approx(n)
    maj = torch.as_tensor(majority(n).truth_table(), dtype=torch.float64)
    assert real_average_sensitivity(maj, n) == pytest.approx(n * math.comb(n - 1, 3) / 2 ** (n - 1))
    # a ±1 table needs scale ¼; squared differences scale with the square of the output
    assert real_average_sensitivity(2 * tt - 1, n, scale=0.25) == pytest.approx(n)
    assert real_average_sensitivity(0.5 * tt + 3, n) == pytest.approx(n / 4)
    with pytest.raises(UserError):
        real_average_sensitivity(tt[:-1], n)


def test_sampled_sensitivity_estimates_the_exact_one():
    class Parity(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x.sum(1) % 2).float()

    est = sampled_real_sensitivity(Parity(), 9, 256, torch.Generator().manual_seed(0))
    assert est == pytest.approx(9.0)  # every flip changes PARITY: exact on any sample
