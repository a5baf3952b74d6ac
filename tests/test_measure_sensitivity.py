"""The model's own sensitivity profile: one batched pass, exact = target's profile, margin, sampling."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from learnability.boolean.analysis import profile_from_truth_table
from learnability.boolean.functions import resolve_function
from learnability.errors import UserError
from learnability.measure import model_outputs, model_profile, model_truth_table


class Counting(nn.Module):
    """T(x) = a hand-set function of the bits, counting forward calls."""

    def __init__(self, fn):
        super().__init__()
        self.fn, self.calls = fn, 0
        self.w = nn.Parameter(torch.ones(1))

    def forward(self, tokens):
        self.calls += 1
        return self.fn(tokens.float()) * self.w


def xor03(x):  # ±1-valued logit of x0 XOR x3
    return 2 * ((x[:, 0] + x[:, 3]) % 2) - 1


@pytest.mark.parametrize(
    ("spec", "fn"),
    [
        ("x0 ^ x3", xor03),
        ("majority", lambda x: x.sum(1) - 3.5 + 0.0 * x[:, 0]),  # n = 7: T > 0 iff majority
        ("first", lambda x: x[:, 0] - 0.5),
        ("parity", lambda x: (x.sum(1) % 2) - 0.5),
    ],
)
def test_exact_profile_equals_target(spec, fn):
    n = 7
    model = Counting(fn)
    tt = model_truth_table(model, n)
    assert model.calls == 1  # one batched pass over all 2^n inputs
    target = resolve_function(spec, n).truth_table()
    assert torch.equal(tt.cpu(), torch.as_tensor(target, dtype=torch.uint8))
    p = model_profile(model, n)
    want = profile_from_truth_table(target, n)
    assert p.counts == [float(c) for c in want.counts]
    assert p.average_sensitivity == pytest.approx(want.average)
    assert p.max_sensitivity == want.max_sensitivity and p.zero_sensitivity == want.zero_count
    assert p.analysis().counts.tolist() == want.counts.tolist()


def test_threshold_and_bit_order():
    model = Counting(lambda x: x[:, 1])  # 0/1 output: threshold 0.5
    tt = model_truth_table(model, 3, threshold=0.5)
    assert tt.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]  # bit 1 of the index is x_1
    assert model_outputs(model, 3).shape == (8,)


def test_margin_counts_undecided_apart():
    # T = x0 - 0.5 + 0.05 * x1 ∈ {-0.5, -0.45, 0.5, 0.55}: margin 0.4 leaves everything decided,
    model = Counting(lambda x: x[:, 0] - 0.5 + 0.05 * x[:, 1])
    assert model_profile(model, 4, margin=0.4).undecided == 0
    p = model_profile(model, 4, margin=0.5)
    # margin 0.5: only T = -0.45 (x0 = 0, x1 = 1) is undecided, 4 strings of 16
    assert p.undecided == 4
    assert sum(p.counts) == 12
    with pytest.raises(UserError):
        model_profile(model, 4, margin=-1)


def test_sampled_profile_above_exact_limit():
    model = Counting(lambda x: (x.sum(1) % 2) - 0.5)
    p = model_profile(
        model, 10, exact_limit=6, samples=300, generator=torch.Generator().manual_seed(0)
    )
    assert not p.exact and p.samples == 300
    assert p.fraction[10] == 1.0 and p.average_sensitivity == 10
    lo, hi = p.ci[10]
    assert lo <= 1.0 <= hi


def test_non_scalar_model_is_user_error():
    model = Counting(lambda x: x)  # (B, n) output
    with pytest.raises(UserError, match="scalar"):
        model_profile(model, 3)
