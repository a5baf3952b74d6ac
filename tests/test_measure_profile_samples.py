"""The `profile` measure's `profile_samples`: exact by default, sampled on request at any n, and the
acceptance count (the balance a same-balance null needs) kept as an estimate with its sample size."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.config import config_hash
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig
from learnability.measure.registry import run_measures
from learnability.models import MLPConfig, build_model
from learnability.tasks import build_task
from learnability.tasks.boolean import BooleanTaskConfig

N = 10


def measured(samples: int | None, seed: int = 0) -> dict:
    """The profile of one random MLP on N bits (±1 targets: threshold 0) with `profile_samples`."""
    config = TrainJobConfig(
        task=BooleanTaskConfig(function="majority", n=N, targets="pm1"),
        model=MLPConfig(n_inputs=N, width=64, depth=2, init="gaussian", init_scale=1.0),
        measure=["profile"],
        profile_samples=samples,
        seed=seed,
    )
    model = build_model(config.model, seed=3)
    task = build_task(config.task, data_seed=0)
    return run_measures(model, task, config, ["profile"], "cpu")


@pytest.fixture(scope="module")
def exact() -> dict:
    return measured(None)


def test_none_and_zero_enumerate_every_string(exact):
    assert exact["profile_exact"] is True and exact == measured(0)
    assert sum(exact["model_counts"]) == 2**N
    assert isinstance(exact["model_accept"], int) and 0 < exact["model_accept"] < 2**N
    assert "model_accept_samples" not in exact


def test_sampled_agrees_with_exact_within_sampling_error(exact):
    s = 20_000
    sampled = measured(s)
    assert sampled["profile_exact"] is False and "function_agreement" not in sampled
    # average sensitivity: the mean of s(x) over the sampled strings; its exact distribution gives the SE
    counts = torch.tensor(exact["model_counts"], dtype=torch.float64)
    k = torch.arange(N + 1, dtype=torch.float64)
    p = counts / counts.sum()
    sd = math.sqrt(float((p * k**2).sum() - float((p * k).sum()) ** 2))
    assert abs(sampled["model_as"] - exact["model_as"]) < 5 * sd / math.sqrt(s)
    # every count is a fraction of 2^n: binomial error of each
    for got, want in zip(sampled["model_counts"], exact["model_counts"]):
        q = want / 2**N
        assert abs(got - want) <= 5 * 2**N * math.sqrt(q * (1 - q) / s) + 1e-9
    # the acceptance count: an estimate, its sample size and a 95% interval that holds the exact one
    q = exact["model_accept"] / 2**N
    assert sampled["model_accept_samples"] == s
    assert abs(sampled["model_accept"] - exact["model_accept"]) < 5 * 2**N * math.sqrt(
        q * (1 - q) / s
    )
    low, high = sampled["model_accept_ci"]
    assert low < exact["model_accept"] < high
    assert high - low == pytest.approx(2 * 1.96 * 2**N * math.sqrt(q * (1 - q) / s), rel=0.1)


def test_sampled_is_deterministic_given_the_run_seed():
    assert measured(500, seed=4) == measured(500, seed=4)
    assert measured(500, seed=4)["model_counts"] != measured(500, seed=5)["model_counts"]


def test_profile_samples_is_out_of_run_ids_at_its_default_and_checked():
    base = TrainJobConfig()
    assert config_hash("train", TrainJobConfig(profile_samples=None)) == config_hash("train", base)
    assert config_hash("train", TrainJobConfig(profile_samples=64)) != config_hash("train", base)
    for bad in (-1, 10**8):
        with pytest.raises(UserError, match="profile_samples"):
            TrainJobConfig(profile_samples=bad)
