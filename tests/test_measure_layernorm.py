"""LayerNorm blowup: both definitions against hand computations."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from learnability.errors import UserError
from learnability.measure import layernorm_blowup
from learnability.models import BooleanTransformerConfig, build_model
from learnability.models.trace import Trace


class Scripted(nn.Module):
    """Returns a hand-written Trace: two LayerNorms over 2 inputs, 2 positions, width 3."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, tokens, trace=False):
        t = Trace()
        t.ln_names = ["layers.0.ln1", "layers.1.ln1"]
        t.ln_normalisers = [
            torch.tensor([[1.0, 3.0], [2.0, 0.0]]),
            torch.tensor([[4.0, 1.0], [0.0, 0.5]]),
        ]
        # Bessel std of [1,2,3] is 1, of [0,2,4] is 2, of [0,0,6] is √12, of [1,1,4] is √3
        row = {
            "a": [1.0, 2.0, 3.0],
            "b": [0.0, 2.0, 4.0],
            "c": [0.0, 0.0, 6.0],
            "d": [1.0, 1.0, 4.0],
        }
        t.ln_inputs = [
            torch.tensor([[row["a"], row["b"]], [row["c"], row["d"]]]),
            torch.tensor([[row["b"], row["a"]], [row["a"], row["c"]]]),
        ]
        out = torch.zeros(tokens.shape[0])
        return (out, t) if trace else out


def test_paper_blowup_hand_computation():
    b = layernorm_blowup(Scripted(), torch.zeros(2, 2, dtype=torch.long), "paper")
    # input 0: max(1+1, 1+3) * max(1+4, 1+1) = 4 * 5 = 20; input 1: max(3, 1) * max(1, 1.5) = 4.5
    assert b.per_input.tolist() == pytest.approx([20.0, 4.5])
    assert b.mean == pytest.approx(12.25) and b.max == pytest.approx(20.0)


def test_published_blowup_hand_computation():
    b = layernorm_blowup(Scripted(), torch.zeros(2, 2, dtype=torch.long), "published")
    # layer 0 (not last): max over positions of 1/std; layer 1 (last): read-out position (last) only
    # input 0: max(1/1, 1/2) * (1/1) = 1; input 1: max(1/√12, 1/√3) * (1/√12)
    want1 = (1 / 3**0.5) * (1 / 12**0.5)
    assert b.per_input.tolist() == pytest.approx([1.0, want1])


def test_blowup_on_a_real_model_matches_its_trace():
    cfg = BooleanTransformerConfig(n_layers=2, n_heads=2, d_model=8, d_ff=8, max_len=6, ln_eps=1e-5)
    model = build_model(cfg, seed=0)
    x = torch.randint(0, 2, (16, 6), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, trace = model(x, trace=True)
    # recompute N = 1/√(var + eps) from the recorded LayerNorm inputs, by hand
    want = torch.ones(16, dtype=torch.float64)
    for inp in trace.ln_inputs:
        var = inp.double().var(-1, unbiased=False)
        want *= (1 + 1 / (var + 1e-5).sqrt()).amax(1)
    got = layernorm_blowup(model, x, "paper")
    assert got.per_input.double().tolist() == pytest.approx(want.tolist(), rel=1e-5)
    assert len(trace.ln_inputs) == 4


def test_unknown_kind():
    with pytest.raises(UserError):
        layernorm_blowup(Scripted(), torch.zeros(2, 2, dtype=torch.long), "code")
