"""Probes: PCA vs neuron variance fractions, attention maps, length generalisation."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.errors import UserError
from learnability.measure import attention_maps, length_generalisation, pca_vs_neurons
from learnability.measure.probes import variance_fractions
from learnability.models import BooleanTransformerConfig, build_model
from learnability.tasks import build_task
from learnability.tasks.boolean import BooleanTaskConfig


def test_variance_fractions_subspace_vs_axis():
    g = torch.Generator().manual_seed(0)
    t = torch.randn(500, 1, generator=g)
    diagonal = t * torch.ones(1, 8) / math.sqrt(8)  # one direction, spread over all neurons
    fr = variance_fractions(diagonal, [1, 4])
    assert fr["pca"][0] == pytest.approx(1.0) and fr["neurons"][0] == pytest.approx(1 / 8, rel=0.01)
    axis = torch.zeros(500, 8)
    axis[:, 3] = t[:, 0]
    fr = variance_fractions(axis, [1])
    assert fr["pca"][0] == pytest.approx(1.0) and fr["neurons"][0] == pytest.approx(1.0)


def tiny(**kw):
    cfg = {"n_layers": 2, "n_heads": 2, "d_model": 8, "d_ff": 8, "max_len": 6, **kw}
    return build_model(BooleanTransformerConfig(**cfg), seed=0)


def test_pca_and_attention_shapes():
    model = tiny()
    x = torch.randint(0, 2, (10, 6), generator=torch.Generator().manual_seed(0))
    res = pca_vs_neurons(model, x, ks=[1, 2, 100])
    assert len(res) == 3 and res[0]["k"] == [1, 2, 8]
    assert all(
        p >= q - 1e-12 for r in res for p, q in zip(r["pca"], r["neurons"])
    )  # PCs are optimal
    maps = attention_maps(model, x)
    assert len(maps) == 2 and maps[0].shape == (10, 2, 6, 6)
    assert torch.allclose(maps[0].sum(-1), torch.ones(10, 2, 6))
    assert attention_maps(model, x, mean=True)[1].shape == (2, 6, 6)


def test_length_generalisation_buckets():
    task = build_task(BooleanTaskConfig(function="first", n=4, length_buckets=[[4, 5], [8, 9]]))
    model = tiny(positions="sinusoidal")
    acc = length_generalisation(model, task, per_length=32)
    assert list(acc) == ["4-5", "8-9"] and all(0.0 <= a <= 1.0 for a in acc.values())
    with pytest.raises(
        UserError, match="position table"
    ):  # learned positions cannot go beyond max_len
        length_generalisation(tiny(max_len=5), task)
    with pytest.raises(UserError):
        length_generalisation(model, build_task(BooleanTaskConfig(function="first", n=4)))
