"""learnability.measure.length and the extendable position schemes: a length-invariant read-out reads
the same thing at every length, setups that cannot extend are refused, training-string counts and
bucket accuracy have closed forms."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.errors import UserError
from learnability.measure.length import (
    REFERENCE,
    bucket_accuracy,
    check_length_setup,
    training_strings,
)
from learnability.models import BooleanTransformerConfig, build_model
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig


def _model(**kw):
    return build_model(BooleanTransformerConfig(d_model=16, d_ff=16, **kw), seed=0).eval()


def test_cls_readout_without_positions_is_length_and_order_invariant():
    m = _model(positions="none", readout="cls")
    x = torch.randint(0, 2, (8, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = m(x)
        # no positions, bidirectional: the CLS output is a function of the multiset of bits
        assert torch.allclose(out, m(x.flip(1)), atol=1e-5)
        # the read position is the CLS token at every length, and nothing limits the length
        assert m(torch.randint(0, 2, (2, 200))).shape == (2,)
        # the CLS output of a string does not depend on where the bits sit: a longer string with the
        # same bits in another order gives the same output as its sorted form
        y = torch.tensor([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0]])
        assert torch.allclose(m(y), m(y.sort(dim=1).values), atol=1e-5)


def test_alibi_sees_order_and_runs_at_any_length():
    m = _model(positions="alibi", readout="cls")
    assert not any("position" in n for n, _ in m.named_parameters())
    x = torch.tensor([[1, 0, 0, 0, 0, 0, 0, 1, 1, 1]])
    with torch.no_grad():
        assert not torch.allclose(m(x), m(x.flip(1)))  # the distance bias breaks the symmetry
        fast = m(torch.randint(0, 2, (3, 300)))
        assert fast.shape == (3,) and torch.isfinite(fast).all()
        y = torch.randint(0, 2, (4, 11))
        assert torch.allclose(m(y), m(y, trace=True)[0], atol=1e-5)


def test_setups_that_cannot_extend_are_refused():
    check_length_setup(BooleanTransformerConfig(positions="none", readout="cls"))
    check_length_setup(BooleanTransformerConfig(positions="sinusoidal", readout="cls"))
    check_length_setup(BooleanTransformerConfig(positions="alibi", readout="eos"))
    for positions, readout in (("none", "last"), ("learned", "cls"), ("sinusoidal", "eos")):
        with pytest.raises(UserError):
            check_length_setup(BooleanTransformerConfig(positions=positions, readout=readout))


def test_training_strings_closed_form():
    got = training_strings(6, 12, 500 * 128)
    assert got.space == sum(2**k for k in range(6, 13)) == 8128
    per = 500 * 128 / 7
    assert got.expected_distinct == pytest.approx(
        sum(2**k * (1 - (1 - 2.0**-k) ** per) for k in range(6, 13))
    )
    assert 7500 < got.expected_distinct < 8128
    # the pre-engine training lengths 1–6 hold only 126 strings
    assert training_strings(1, 6, 10**6).space == 126
    with pytest.raises(UserError):
        training_strings(3, 2, 10)


def test_bucket_accuracy_enumerates_short_lengths():
    task = BooleanTask(BooleanTaskConfig(function="majority", n=5, min_len=3, max_len=5))

    class Oracle(torch.nn.Module):  # MAJORITY with ties to 1, as the zoo defines it
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (2 * x.sum(1) >= x.shape[1]).float()

    scores = bucket_accuracy(Oracle(), task, [[3, 5], [6, 9]], per_length=64)
    assert scores["buckets"] == {"3-5": 1.0, "6-9": 1.0}
    assert set(scores["lengths"]) == {str(k) for k in range(3, 10)}

    class Constant(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(x.shape[0])

    # every string of length 3 is enumerated: a constant 0 is right on the 4 strings with ≤ 1 one
    low = bucket_accuracy(Constant(), task, [[3, 3]], per_length=64)["buckets"]["3-3"]
    assert low == pytest.approx(4 / 8)


def test_reference_numbers_are_credited_to_their_source():
    assert "2410.02140" in REFERENCE.source and "no length experiment" in REFERENCE.source
    assert REFERENCE.accuracy["parity"] == (1.00, 0.83, 0.62)
    assert all(math.isfinite(v) for v in REFERENCE.accuracy["majority"])
