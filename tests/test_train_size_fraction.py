"""`task.train_size` as a count or as a fraction of the 2^n strings."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from learnability.config import apply_overrides, config_hash, from_dict
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig
from learnability.tasks.boolean import BooleanTask, BooleanTaskConfig, codes_of, train_count


@pytest.mark.parametrize(
    ("n", "size", "count"),
    [(8, 0.25, 64), (8, 1.0, 256), (6, 0.1, 6), (4, 0.01, 1), (8, 200, 200), (5, 1, 1)],
)
def test_train_size_is_a_count_or_a_fraction_of_two_to_the_n(n, size, count):
    config = from_dict(BooleanTaskConfig, {"n": n, "mode": "fixed", "train_size": size})
    assert type(config.train_size) is type(size)  # 1.0 stays a fraction, 1 stays a count
    assert train_count(config) == count  # round(fraction · 2^n), at least 1
    task = BooleanTask(config, data_seed=3)
    train = task.train_set()
    assert train is not None and len(train) == count
    assert len(set(codes_of(train.inputs).tolist())) == count  # distinct strings


def test_the_whole_space_as_a_fraction_scores_on_the_training_set():
    task = BooleanTask(BooleanTaskConfig(n=5, mode="fixed", train_size=1.0))
    assert len(task.train_set()) == len(task.test_set()) == 32


@pytest.mark.parametrize(
    ("n", "size", "words"),
    [
        (8, 1.5, "must be in (0, 1]"),
        (8, 0.0, "must be in (0, 1]"),
        (8, -0.25, "must be in (0, 1]"),
        (8, 256.0, "give a count as an integer"),
        (30, 0.5, "needs n ≤ 24"),
        (8, 257, "in 1..256"),
        (8, 0, "in 1..256"),
    ],
)
def test_out_of_range_train_sizes_are_refused(n, size, words):
    with pytest.raises(UserError) as info:
        from_dict(BooleanTaskConfig, {"n": n, "mode": "fixed", "train_size": size})
    assert words in str(info.value) and "task.train_size=" in str(info.value)


def test_fraction_from_an_override_and_count_ids_unchanged():
    data = apply_overrides({"task": {"mode": "fixed", "n": 8}}, ["task.train_size=0.25"])
    assert from_dict(TrainJobConfig, data).task.train_size == 0.25
    # a count keeps the int it always was: the run id of a stored count config does not move
    count = from_dict(TrainJobConfig, {"task": {"mode": "fixed", "n": 8, "train_size": 64}})
    assert isinstance(count.task.train_size, int)
    frac = from_dict(TrainJobConfig, {"task": {"mode": "fixed", "n": 8, "train_size": 0.25}})
    assert config_hash("train", count) != config_hash(
        "train", frac
    )  # a fraction is its own setting


def test_a_number_goes_to_the_union_member_of_its_own_type():
    @dataclass
    class C:
        x: int | float = 1
        y: float | int = 1.0

    assert from_dict(C, {"x": 1.0, "y": 2}) == C(1.0, 2)
    assert type(from_dict(C, {"x": 1.0}).x) is float and type(from_dict(C, {"y": 2}).y) is int
