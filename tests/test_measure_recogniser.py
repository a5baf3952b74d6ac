"""Recogniser measurements: logit tables, margins, profiles, one-bit changes, LayerNorm statistics and the
batched ensemble, against per-string forwards and the Boolean-analysis module."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from learnability.boolean import profile_from_truth_table
from learnability.measure.recogniser import (
    decision_labels,
    ensemble_logit_tables,
    label_profile,
    logit_table,
    mean_one_bit_change,
    one_bit_changes,
    set_layernorm_eps,
)
from learnability.measure.sensitivity import MAX_CHUNK, MIN_CHUNK, default_chunk, model_outputs
from learnability.models import BooleanTransformerConfig, build_model


def _model(n: int, seed: int = 0, **kw) -> torch.nn.Module:
    cfg = dict(n_layers=2, n_heads=2, d_model=8, d_ff=16, embedding="add", max_len=n, readout="eos",
               init="gaussian", ln_init="unit", ln_eps=0.0)  # fmt: skip
    return build_model(BooleanTransformerConfig(**{**cfg, **kw}), seed=seed).eval()


def test_one_bit_changes_of_a_linear_table_are_the_weights():
    n = 6
    w = torch.tensor([0.5, -2.0, 1.0, 3.0, -0.25, 0.0])
    table = ((torch.arange(2**n)[:, None] >> torch.arange(n)) & 1).float() @ w
    assert torch.allclose(one_bit_changes(table, n), w.abs())
    assert mean_one_bit_change(table, n) == pytest.approx(float(w.abs().mean()))


def test_label_profile_is_the_boolean_profile_at_margin_zero_and_the_definition_with_one():
    n = 7
    table = torch.randn(2**n, generator=torch.Generator().manual_seed(0))
    plain = label_profile(decision_labels(table), n)
    tt = (table > 0).numpy().astype(np.uint8)
    assert plain.tolist() == list(profile_from_truth_table(tt, n, fourier=False).counts)
    labels = decision_labels(table, 0.5)  # |T| < 0.5 undecided
    got = label_profile(labels, n)
    lab = labels.tolist()
    want = np.zeros(n + 1, np.int64)
    for x in range(2**n):
        if lab[x] >= 0:  # an undecided neighbour counts as a change
            want[sum(lab[x ^ (1 << i)] != lab[x] for i in range(n))] += 1
    assert got.tolist() == want.tolist() and got.sum() == int((labels >= 0).sum())


def test_logit_table_is_the_per_string_forward_and_counts_layernorm_rows():
    n = 5
    model = _model(n)
    table, stats = logit_table(model, n, chunk=7)  # a chunk that does not divide 2^n
    for i in (0, 3, 17, 31):
        x = torch.tensor([[(i >> k) & 1 for k in range(n)]])
        with torch.no_grad():
            assert float(model(x)) == pytest.approx(float(table[i]), rel=1e-5, abs=1e-6)
    assert stats.rows > 0 and stats.degenerate == 0 and stats.min_var > 0
    assert torch.allclose(table, model_outputs(model, n), rtol=1e-5, atol=1e-5)
    with (
        torch.no_grad()
    ):  # all-zero weights: every LayerNorm row is constant, finite output at eps = 0
        for p in model.parameters():
            p.zero_()
    zero, stats = logit_table(model, n)
    assert torch.isfinite(zero).all() and stats.degenerate == stats.rows and stats.min_var == 0


def test_eps_is_switched_on_the_same_weights():
    n = 4
    model = _model(n)
    a, _ = logit_table(model, n)
    set_layernorm_eps(model, 1.0)
    b, stats = logit_table(model, n)
    set_layernorm_eps(model, 0.0)
    assert not torch.equal(a, b) and torch.equal(a, logit_table(model, n)[0])
    assert stats.max_normaliser <= 1.0  # 1/√(var + 1) ≤ 1


def test_ensemble_equals_the_loop():
    n = 5
    models = [_model(n, seed=s) for s in range(4)]
    tables, stats = ensemble_logit_tables(models, n, chunk=8)
    for j, m in enumerate(models):
        t, s = logit_table(m, n)
        assert torch.allclose(tables[j], t, rtol=1e-4, atol=1e-4 * float(t.abs().max()))
        assert s.rows == stats[j].rows and s.min_var == pytest.approx(stats[j].min_var, rel=1e-3)


def test_default_chunk_is_a_bounded_power_of_two():
    for n, d, ff in [(4, 8, 16), (12, 16, 32), (16, 128, 256), (20, 512, 2048), (1, 1, 1)]:
        c = default_chunk(n, d, ff)
        assert MIN_CHUNK <= c <= MAX_CHUNK and c & (c - 1) == 0
    assert default_chunk(16, 128, 256) < default_chunk(16, 16, 32)  # wider models, smaller chunks
