"""Stacked sharpness passes (`measure.sharpness`, STACKED) give exactly the numbers of one
`functional_call` per direction: same directions, same bits, for every kind, quantity and radius."""

from __future__ import annotations

import importlib

import pytest
import torch

from learnability.measure.bounds import sharpness_profile
from learnability.models import BooleanTransformerConfig, GPTConfig, build_model
from learnability.tasks.base import Batch

sharp = importlib.import_module("learnability.measure.sharpness")


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
    sharp.STACKED = True


def _boolean(n: int = 6, batch: int = 40) -> tuple[torch.nn.Module, Batch]:
    torch.manual_seed(0)
    model = build_model(BooleanTransformerConfig(n_layers=2, d_model=16, d_ff=16, max_len=n))
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 2, (batch, n), generator=g)
    return model, Batch(x, torch.randint(0, 2, (batch,), generator=g).float())


def _gpt() -> tuple[torch.nn.Module, Batch]:
    torch.manual_seed(0)
    model = build_model(GPTConfig(vocab_size=11, max_len=8, n_layers=2, n_heads=2, d_model=16))
    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 11, (12, 8), generator=g)
    return model, Batch(x, torch.randint(0, 11, (12, 8), generator=g))


def _same(a, b) -> bool:
    """Estimates equal to the bit (a NaN interval of one direction equal to NaN)."""
    x = [a.mean, a.ci_low, a.ci_high, a.n]
    y = [b.mean, b.ci_low, b.ci_high, b.n]
    return all(u == v or (u != u and v != v) for u, v in zip(x, y))


def _both(fn):
    """fn() one direction at a time, then in stacked passes (checked to be taken)."""
    out = {}
    real, calls = sharp._values_stacked, []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    for stacked in (False, True):
        sharp.STACKED = stacked
        sharp._values_stacked = counted
        try:
            out[stacked] = fn()
        finally:
            sharp._values_stacked = real
        assert bool(calls) == stacked
    return out[False], out[True]


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
@pytest.mark.parametrize("directions", [1, 5, 19])
def test_stacked_sharpness_is_bit_identical_boolean(kind, directions):
    model, batch = _boolean()
    old, new = _both(
        lambda: sharp.sharpness(
            model,
            batch,
            rho=0.3,
            kind=kind,
            directions=directions,
            generator=torch.Generator().manual_seed(7),
        )
    )
    assert _same(old, new)


def test_stacked_sharpness_is_bit_identical_gpt():
    model, batch = _gpt()

    def loss(out, b):
        return torch.nn.functional.cross_entropy(out.flatten(0, 1).float(), b.targets.flatten())

    for quantity in ("output", "loss"):
        old, new = _both(
            lambda quantity=quantity: sharp.sharpness(
                model,
                batch,
                loss_fn=loss,
                rho=0.05,
                kind="gaussian",
                directions=9,
                quantity=quantity,
                generator=torch.Generator().manual_seed(3),
            )
        )
        assert old == new


def test_profile_draws_once_and_matches_radius_by_radius():
    model, batch = _boolean(n=5, batch=32)
    radii = [0.05, 0.1, 0.4, 1.6]
    old, new = _both(lambda: sharpness_profile(model, batch, radii, directions=11, seed=4))
    assert old == new
    # and each radius is what sharpness gives alone with a fresh generator of that seed
    alone = [
        sharp.sharpness(
            model,
            batch,
            rho=r,
            kind="sphere",
            directions=11,
            generator=torch.Generator().manual_seed(4),
        )
        for r in radii
    ]
    assert [e.mean for e in new] == [e.mean for e in alone]


def test_the_generator_ends_where_one_by_one_leaves_it():
    model, batch = _boolean()
    ends = []
    for stacked in (False, True):
        sharp.STACKED = stacked
        g = torch.Generator().manual_seed(9)
        sharp.sharpness_radii(model, batch, [0.1, 0.2], directions=6, generator=g)
        ends.append(torch.randn(3, generator=g))
    assert torch.equal(ends[0], ends[1])


def test_model_is_left_as_it_was():
    model, batch = _boolean()
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sharp.sharpness(model, batch, rho=0.2, directions=4)
    assert model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
