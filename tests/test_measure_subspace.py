"""The subspace probe's nulls on isotropic data: the finite-sample null is what isotropic rows of that shape
really give (not k/D), few rows are concentrated whatever the data, and a planted low-dimensional subspace is
found by PCs and not by neurons."""

from __future__ import annotations

import pytest
import torch

from learnability.measure.probes import variance_fractions
from learnability.measure.subspace import (
    isotropic_fractions,
    scored_hidden,
    subspace_probe,
    top_pcs,
)
from learnability.models import GPTConfig, build_model


def test_isotropic_null_with_many_rows_is_k_over_d():
    null = isotropic_fractions(20_000, 64, [4, 16], draws=2, seed=0)
    # k/D up to the Marchenko–Pastur spread of the top eigenvalues ((1 + √(D/N))² ≈ 1.12 at the edge)
    assert 4 / 64 < null["pca"][0] < 1.15 * 4 / 64
    assert null["neurons"][1] == pytest.approx(16 / 64, rel=0.05)
    assert all(
        p >= n for p, n in zip(null["pca"], null["neurons"])
    )  # PCs are the best k directions


def test_few_rows_look_concentrated_even_when_isotropic():
    # 43 rows of isotropic noise in 256 dims (the pre-engine probe's shape): top-10 PCs ≈ 0.38, not 10/256
    null = isotropic_fractions(43, 256, [10], draws=20, seed=1)
    assert 0.33 < null["pca"][0] < 0.43
    assert (
        null["pca"][0] / null["neurons"][0] > 4
    )  # the PC/neuron ratio is far above 1 for pure noise
    # closed form: n centred rows span n − 1 directions, so the top n − 1 PCs hold everything
    assert isotropic_fractions(8, 256, [7], draws=3)["pca"][0] == pytest.approx(1.0)
    # a single sample of that shape lands near the null's mean
    x = torch.randn(43, 256, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    assert variance_fractions(x, [10])["pca"][0] == pytest.approx(null["pca"][0], abs=0.05)


def test_a_planted_rotated_subspace_is_found_by_pcs_not_neurons():
    g = torch.Generator().manual_seed(0)
    basis, _ = torch.linalg.qr(torch.randn(128, 128, generator=g, dtype=torch.float64))
    rows = torch.randn(2000, 4, generator=g, dtype=torch.float64) @ basis[:, :4].T * 10
    rows = rows + 0.1 * torch.randn(2000, 128, generator=g, dtype=torch.float64)
    probe = subspace_probe(
        [rows, rows], [4], at_init=[torch.randn(2000, 128, generator=g, dtype=torch.float64)] * 2
    )
    entry = probe[1]
    assert entry["layer"] == 1 and entry["rows"] == 2000 and entry["k"] == [4]
    assert entry["pca"][0] > 0.99 and entry["null_pca"][0] < 0.06 and entry["init_pca"][0] < 0.06
    assert entry["neurons"][0] < 0.2  # not axis-aligned: no 4 neurons hold it


def test_scored_hidden_reads_the_scored_positions_of_every_layer():
    model = build_model(
        GPTConfig(vocab_size=10, max_len=5, n_layers=2, n_heads=2, d_model=8), seed=0
    )
    tokens = torch.randint(0, 10, (6, 5), generator=torch.Generator().manual_seed(0))
    mask = torch.zeros(6, 5, dtype=torch.bool)
    mask[:, 3] = True
    mask[0, 1] = True
    hidden = scored_hidden(model, tokens, mask)
    assert len(hidden) == 3 and all(h.shape == (7, 8) for h in hidden)
    assert scored_hidden(model, tokens, None)[0].shape == (6, 8)
    coords, fractions = top_pcs(model.token_embedding.weight, k=2)
    assert len(coords) == 10 and len(coords[0]) == 2 and len(fractions) == 8
    assert fractions == sorted(fractions, reverse=True) and sum(fractions) <= 1 + 1e-9
