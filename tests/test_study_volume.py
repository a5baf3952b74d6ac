"""Study `volume`: the random-profile measurements, the random-function control, and a tiny end-to-end run."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from learnability.errors import UserError
from learnability.studies import volume as v
from learnability.studies.legacy import VERDICTS, FigureSink, StudyResults


def _model(**kw):
    from learnability.models import build_model

    config = v.RandomProfilesConfig(**kw)
    return build_model(config.model_config(), seed=kw.get("seed", 0)).eval()


# -- measurements on logit tables --------------------------------------------------------------------------


def test_one_bit_changes_of_a_linear_table_are_the_weights():
    # T(x) = Σ_k w_k x_k changes by exactly |w_i| when bit i flips, at every x
    n = 7
    w = torch.tensor([0.5, -2.0, 1.0, 3.0, -0.25, 0.0, 1.5])
    bits = (torch.arange(2**n)[:, None] >> torch.arange(n)) & 1
    table = bits.float() @ w
    assert torch.allclose(v.one_bit_changes(table, n), w.abs())
    assert v.mean_one_bit_change(table, n) == pytest.approx(float(w.abs().mean()))


def test_decided_zero_sensitive_counts_margin_and_neighbours():
    n = 2  # strings 00, 10, 01, 11 (index bit k = x_k)
    table = torch.tensor([1.0, 0.5, 2.0, -1.0])
    assert v.decided_zero_sensitive(table, n, 0.0) == (
        0,
        1,
    )  # only x=00 has both neighbours accepted
    # with margin 0.6 the string of T = 0.5 becomes undecided, and 00 loses its zero sensitivity
    assert v.decided_zero_sensitive(table, n, 0.6) == (1, 0)


def test_logit_table_matches_per_string_forward_in_bit_order():
    n = 5
    model = _model(n=n, init="xavier_normal", ln_eps=1e-5, depth=2, width=8)
    table, degenerate = v.logit_table(model, n)
    assert table.shape == (2**n,) and degenerate == 0
    for i in (0, 1, 6, 19, 31):
        x = torch.tensor([[(i >> k) & 1 for k in range(n)]])
        with torch.no_grad():
            assert float(model(x)) == pytest.approx(float(table[i]), rel=1e-5, abs=1e-6)


def test_profile_agrees_with_the_shared_model_profile():
    from learnability.measure import model_profile

    config = v.RandomProfilesConfig(
        n=8, init="gaussian", ln_eps=0.0, depth=1, width=8, models=3, seed=4
    )
    out = v.profile_random_models(config)
    for j in range(config.models):
        model = _model(n=8, init="gaussian", ln_eps=0.0, depth=1, width=8, seed=4 * 1_000_003 + j)
        assert out["profiles"][j] == [int(c) for c in model_profile(model, 8).counts]
        assert sum(out["profiles"][j]) == 2**8


def test_eps_zero_never_crashes_and_counts_degenerate_rows():
    n = 4
    model = _model(n=n, init="uniform", ln_eps=0.0, depth=2, width=8)
    with torch.no_grad():  # all-zero weights: every LayerNorm input row is constant (zero variance)
        for p in model.parameters():
            p.zero_()
    table, degenerate = v.logit_table(model, n)
    assert torch.isfinite(table).all()
    tokens = (torch.arange(2**n)[:, None] >> torch.arange(n)) & 1
    with torch.no_grad():
        _, trace = model(tokens, trace=True)
    assert degenerate > 0
    # the hook counts the rows the fast path meets; the trace computes every position of the last layer too
    assert degenerate <= trace.degenerate


def test_random_models_at_eps_zero_record_every_field():
    config = v.RandomProfilesConfig(n=6, init="uniform", ln_eps=0.0, models=4, margin=0.5)
    out = v.profile_random_models(config)
    for key in ("k0", "profiles", "constant", "undecided", "k0_decided", "degenerate", "max_flip"):
        assert len(out[key]) == 4
    assert out["nonfinite"] == 0
    assert all(kd <= k for kd, k in zip(out["k0_decided"], out["k0"]))


def test_bad_configs_are_user_errors():
    with pytest.raises(UserError, match="init scheme"):
        v.RandomProfilesConfig(init="he_normal")
    with pytest.raises(UserError, match="n=40"):
        v.RandomProfilesConfig(n=40)
    with pytest.raises(UserError, match="ln_eps"):
        v.RandomProfilesConfig(ln_eps=-1.0)
    with pytest.raises(UserError, match="scale"):
        v.STUDY.sweeps("huge")


# -- science -----------------------------------------------------------------------------------------------


def test_random_function_control_reproduces_one_minus_inverse_e():
    # K_0 of a uniform random function is a sum of 2^N weakly dependent indicators of mean 2^-N, so
    # P(K_0 > 0) ≈ 1 − 1/e = 0.632. Tolerance: 4 binomial standard errors (0.078 at 600 draws), which also
    # covers the finite-N deviation from the Poisson limit (< 0.01 at N = 10).
    count = 600
    k0 = v.random_function_profiles(10, count, seed=3)[:, 0]
    rate = float((k0 > 0).mean())
    assert abs(rate - v.ONE_MINUS_INV_E) < 4 * math.sqrt(0.632 * 0.368 / count)
    assert k0.mean() == pytest.approx(1.0, abs=0.25)  # E[K_0] = 2^N · 2^-N = 1


def test_random_transformers_have_zero_sensitivity_strings_unlike_random_functions():
    # the study's headline fact, robust at tiny scale: 24 random transformers (eps = 0, two init schemes)
    # all have K_0 > 0, whereas 24 random functions at the same N would all do so with probability 0.632^24
    k0 = []
    for init in ("xavier_normal", "gaussian"):
        k0 += v.profile_random_models(
            v.RandomProfilesConfig(n=8, init=init, ln_eps=0.0, models=12)
        )["k0"]
    assert min(k0) > 0


def test_target_profiles_and_distance():
    assert v.target_profile("parity", 6).tolist() == [0] * 6 + [64]
    assert v.target_profile("first", 6)[1] == 64
    assert v.profile_distance(v.target_profile("parity", 6), v.target_profile("first", 6)) == 1.0
    assert v.profile_distance([3, 1, 0], [6, 2, 0]) == 0.0


# -- plumbing: sweeps, jobs through the runner, analysis ------------------------------------------------


def test_quick_and_paper_sweeps_expand_and_validate():
    for scale in ("quick", "paper"):
        runs = [r for s in v.STUDY.sweeps(scale) for r in s.expand()]
        assert len({r.run_id for r in runs}) == len(runs)
        assert {r.job for r in runs} == {
            "volume.random_profiles",
            "volume.random_functions",
            "train",
        }
    assert "random transformers" in v.STUDY.estimate("quick")


TINY = dataclasses.replace(
    v.PLANS["quick"],
    ns=[3, 5],
    eps=[0.0, 1.0],
    archs=[(1, 8)],
    models=3,
    arch_n=4,
    arch_depths=[1],
    arch_widths=[8],
    arch_models=2,
    control_count=50,
    trained_ns=[3],
    trained_seeds=[0],
    trained_model={"n_layers": 1, "n_heads": 1, "d_model": 8, "d_ff": 8},
    trained_train={
        "steps": 20,
        "batch_size": 16,
        "lr": 1e-2,
        "weight_decay": 0.0,
        "eval_every": 20,
    },
)


def test_tiny_study_runs_end_to_end(tmp_path):
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store

    summary = run_sweep(v.build_sweeps(TINY), tmp_path / "store", workers=0, progress=False)
    assert summary.failed == 0 and summary.crashed == 0
    records = Store(tmp_path / "store").records()
    assert {r.status for r in records} <= {"ok", "diverged"}
    out = FigureSink(tmp_path / "fig", "volume")
    claims = v.STUDY.analyse(StudyResults(records, "quick"), out)
    assert len(claims) == 9
    assert all(c.verdict in VERDICTS and c.measured and c.scale == "quick" for c in claims)
    names = {f.name for f in out.figures}
    assert {
        "s_histogram",
        "k0_positive",
        "k0_growth",
        "lipschitz",
        "measure_zero",
        "trained",
    } <= names
    assert all(f.png.exists() and f.pdf.exists() for f in out.figures)
    assert any("project's own protocol" in note for note in out.notes)
    # random transformers: every cell ran all its models on all strings
    cells = [r for r in records if r.job == "volume.random_profiles"]
    assert all(len(r.metrics["k0"]) == r.config["models"] for r in cells)
    assert all(np.sum(p) == 2 ** r.config["n"] for r in cells for p in r.metrics["profiles"])


def test_analysis_with_no_records_is_inconclusive(tmp_path):
    claims = v.STUDY.analyse(StudyResults([], "quick"), FigureSink(tmp_path, "volume"))
    assert len(claims) == 9 and {c.verdict for c in claims} == {"inconclusive"}
