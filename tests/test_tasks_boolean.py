"""Boolean tasks: targets, splits, exclusion, determinism, scratchpad, variable lengths, bad input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest
import torch

from learnability.errors import UserError
from learnability.tasks import Task, build_task, register_task
from learnability.tasks.boolean import BooleanTaskConfig, bits_of, codes_of


def task(**kw):
    return build_task(BooleanTaskConfig(**kw), data_seed=kw.pop("data_seed", 0))


def test_codes_round_trip_and_bit_order():
    codes = torch.arange(64)
    bits = bits_of(codes, 6)
    assert torch.equal(codes_of(bits), codes)
    assert bits[1].tolist() == [1, 0, 0, 0, 0, 0]  # x_0 is the least significant bit


def test_parity_targets_and_scales():
    t = task(function="parity", n=6)
    b = t.test_set()  # 2^6 ≤ test_size: every string
    assert len(b) == 64 and b.inputs.dtype == torch.long and b.targets.shape == (64,)
    assert torch.equal(b.targets, (b.inputs.sum(1) % 2).float())
    pm = task(function="parity", n=6, targets="pm1").test_set()
    assert torch.equal(pm.targets, 2 * b.targets - 1)
    assert t.output == "scalar" and t.loss == "mse" and t.vocab_size == 2 and t.seq_len == 6


def test_expression_and_accuracy_threshold():
    t = task(function="x0 ^ x3", n=5, targets="pm1")
    b = t.test_set()
    assert torch.equal(b.targets, 2 * ((b.inputs[:, 0] ^ b.inputs[:, 3]).float()) - 1)
    assert t.accuracy(b.targets * 0.1, b) == 1.0  # thresholded at 0 for ±1 targets
    assert t.accuracy(-b.targets, b) == 0.0
    t01 = task(function="first", n=5)
    b01 = t01.test_set()
    assert t01.accuracy(b01.targets * 0.2 + 0.4, b01) == 1.0  # 0.4 / 0.6 around the 0.5 threshold


def test_fixed_mode_distinct_disjoint_and_seeded():
    t = task(function="random:seed=3", n=8, mode="fixed", train_size=100, test_size=500)
    train, test = t.train_set(), t.test_set()
    tr, te = codes_of(train.inputs), codes_of(test.inputs)
    assert len(train) == 100 and len(torch.unique(tr)) == 100
    assert len(test) == 156 and not torch.isin(te, tr).any()  # the complement, all of it fits
    again = task(function="random:seed=3", n=8, mode="fixed", train_size=100, test_size=500)
    assert torch.equal(again.train_set().inputs, train.inputs)
    other = build_task(
        BooleanTaskConfig(function="random:seed=3", n=8, mode="fixed", train_size=100), data_seed=1
    )
    assert not torch.equal(other.train_set().inputs, train.inputs)


def test_online_batches_exclude_test_strings_and_are_deterministic():
    t = task(function="majority", n=9, test_size=256)
    test_codes = codes_of(t.test_set().inputs)
    assert len(torch.unique(test_codes)) == 256
    b = t.sample(4096, torch.Generator().manual_seed(0))
    assert not torch.isin(codes_of(b.inputs), test_codes).any()
    b2 = t.sample(4096, torch.Generator().manual_seed(0))
    assert torch.equal(b.inputs, b2.inputs)
    assert t.train_set() is None


def test_scratchpad_prefix_parity():
    t = task(function="parity", n=7, scratchpad=True)
    b = t.sample(32, torch.Generator().manual_seed(1))
    assert t.output == "tokens" and t.loss == "mse"
    assert b.targets.shape == (32, 7) and b.mask.all()
    assert torch.equal(b.targets[:, -1], (b.inputs.sum(1) % 2).float())
    assert torch.equal(b.targets[:, 2], ((b.inputs[:, :3].sum(1)) % 2).float())
    assert t.accuracy(b.targets, b) == 1.0


def test_variable_lengths_and_buckets():
    t = task(function="parity", n=6, min_len=3, max_len=6, length_buckets=[[7, 8], [9, 9]])
    g = torch.Generator().manual_seed(0)
    lengths = {t.sample(8, g).inputs.shape[1] for _ in range(40)}
    assert lengths == {3, 4, 5, 6}
    sets = t.length_test_sets(per_length=16)
    assert list(sets) == ["7-8", "9-9"]
    assert [b.inputs.shape[1] for b in sets["7-8"]] == [7, 8]
    for b in sets["7-8"]:
        assert torch.equal(b.targets, (b.inputs.sum(1) % 2).float())


@pytest.mark.parametrize(
    "kw",
    [
        {"function": "no_such_function"},
        {"mode": "streaming"},
        {"targets": "pm"},
        {"function": "majority", "scratchpad": True},
        {"min_len": 7, "max_len": 3},
        {"mode": "fixed", "train_size": 10_000, "n": 4},
        {"n": 0},
        {"length_buckets": [[5]]},
    ],
)
def test_bad_input_is_user_error(kw):
    with pytest.raises(UserError):
        task(**kw)


def test_unknown_task_and_registry(monkeypatch):
    import learnability.tasks as tasks

    # keep the global registry clean for other tests
    monkeypatch.setattr(tasks, "TASK_CONFIGS", dict(tasks.TASK_CONFIGS))
    monkeypatch.setattr(tasks, "_BUILDERS", dict(tasks._BUILDERS))

    @dataclass
    class Dummy:
        name: Literal["dummy_test"] = "dummy_test"

    class DummyTask(Task):
        vocab_size, seq_len = 3, 2

    register_task(Dummy, lambda config: DummyTask())
    assert isinstance(build_task(Dummy()), DummyTask)

    @dataclass
    class Nope:
        name: str = "nope"

    with pytest.raises(UserError, match="unknown task"):
        build_task(Nope())
