"""Boolean tasks' `label_noise`: training labels flipped with probability p, test labels clean,
deterministic given the data seed, and p = 0 drawing exactly what it drew before."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from learnability.config import config_hash
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig


def task(seed: int = 5, **kw) -> BooleanTask:
    kw = {"function": "majority", "n": 12, **kw}
    return BooleanTask(BooleanTaskConfig(**kw), data_seed=seed)


def clean(t: BooleanTask, bits: torch.Tensor) -> torch.Tensor:
    return t.target_values(bits)


@pytest.mark.parametrize("targets", ["01", "pm1"])
def test_online_flips_a_fraction_p_of_training_labels(targets):
    p, batches, size = 0.2, 40, 256
    t = task(label_noise=p, targets=targets)
    g = torch.Generator().manual_seed(0)
    flipped = 0
    for _ in range(batches):
        b = t.sample(size, g)
        want = clean(t, b.inputs)
        other = 1 - want if targets == "01" else -want
        hit = b.targets != want
        assert torch.equal(b.targets[hit], other[hit])  # a flip is the other label, nothing else
        flipped += int(hit.sum())
    total = batches * size
    assert abs(flipped / total - p) < 5 * math.sqrt(p * (1 - p) / total)


def test_test_set_is_clean_and_the_same_as_without_noise():
    for mode in ("online", "fixed"):
        noisy, plain = task(label_noise=0.3, mode=mode), task(mode=mode)
        assert torch.equal(noisy.test_set().inputs, plain.test_set().inputs)
        assert torch.equal(noisy.test_set().targets, plain.test_set().targets)
        assert torch.equal(noisy.test_set().targets, clean(noisy, noisy.test_set().inputs))


@settings(max_examples=25, deadline=None)
@given(p=st.floats(0.0, 0.4999), size=st.integers(1, 300))
def test_fixed_mode_flips_exactly_round_p_n_training_labels(p, size):
    t = task(mode="fixed", train_size=size, label_noise=p, n=10)
    train = t.train_set()
    assert train is not None
    hit = train.targets != clean(t, train.inputs)
    assert int(hit.sum()) == round(p * size)
    if p:
        assert t.noisy is not None and torch.equal(hit, t.noisy)
    plain = task(mode="fixed", train_size=size, n=10).train_set()
    assert plain is not None and torch.equal(train.inputs, plain.inputs)  # the same strings


def test_noise_is_deterministic_given_the_data_seed():
    def flips(seed: int, mode: str) -> torch.Tensor:
        t = task(label_noise=0.25, mode=mode, seed=seed, train_size=400)
        b = t.train_set() if mode == "fixed" else t.sample(512, torch.Generator().manual_seed(seed))
        assert b is not None
        return b.targets != clean(t, b.inputs)

    for mode in ("online", "fixed"):
        assert torch.equal(flips(1, mode), flips(1, mode))
        assert not torch.equal(flips(1, mode), flips(2, mode))


def test_zero_noise_draws_nothing_more():
    """p = 0 takes the strings and nothing else from the batch generator (as before it existed), and
    p > 0 draws its flips after the strings, so its first batch has the same strings."""
    t, noisy = task(n=30), task(n=30, label_noise=0.1)  # 2^30 strings: no test string is drawn
    g, ref, g2 = (torch.Generator().manual_seed(3) for _ in range(3))
    b = t.sample(64, g)
    bits = torch.randint(0, 2, (64, 30), generator=ref)
    assert torch.equal(b.inputs, bits) and torch.equal(g.get_state(), ref.get_state())
    assert torch.equal(b.targets, clean(t, bits))
    assert torch.equal(noisy.sample(64, g2).inputs, bits)


def test_label_noise_leaves_run_ids_alone_at_zero():
    base = TrainJobConfig()
    assert config_hash("train", TrainJobConfig(task=BooleanTaskConfig(label_noise=0.0))) == (
        config_hash("train", base)
    )
    assert config_hash("train", TrainJobConfig(task=BooleanTaskConfig(label_noise=0.1))) != (
        config_hash("train", base)
    )


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"label_noise": 0.5}, r"task.label_noise=0.5 .*\[0, 0.5\)"),
        ({"label_noise": -0.1}, "task.label_noise"),
        ({"label_noise": float("nan")}, "task.label_noise"),
        ({"label_noise": 0.1, "scratchpad": True, "function": "parity"}, "scratchpad"),
    ],
)
def test_bad_label_noise_is_a_one_line_error(values, says):
    with pytest.raises(UserError, match=says):
        BooleanTaskConfig(**values)
