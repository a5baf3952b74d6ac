"""Study `sparse_xor`: the jobs' scientific facts at small d, the bookkeeping that turns records into
claim evidence (smallest working step size, m*, n*, the FFNN's width), the censored sample-size fit on
synthetic data with a known exponent, a kind that never succeeds, and a tiny plan end to end."""

from __future__ import annotations

import math
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from learnability.claims import CensoredTrend, Units, evaluate, judge, within
from learnability.errors import UserError
from learnability.jobs.sparse_xor import (
    ManyStepsConfig,
    MinMConfig,
    OneStepConfig,
    SamplesConfig,
    many_steps,
    min_m,
    one_step,
    samples,
    step_sizes,
    two_head,
)
from learnability.models import two_head_scaling, two_head_steps
from learnability.models.two_head import sample_grad
from learnability.models.two_head_scaling import NestedEmbeddings, nested_m_scan, sample_ladder
from learnability.models.two_head_steps import StepGrid, one_step_scan, scan_scores, theory_scale
from learnability.stats import ols
from learnability.studies import get_study
from learnability.studies.base import Plan, StudyResults
from learnability.studies.pipeline import analyse_records
from learnability.studies.sparse_xor import claims as claims_module
from learnability.studies.sparse_xor import evidence as ev
from learnability.studies.sparse_xor import exhibits
from learnability.studies.sparse_xor.evidence import (
    ffnn_widths,
    m_star,
    n_star,
    shared_index,
    succeeded,
    window,
)
from learnability.studies.sparse_xor.plan import SUCCESS, SparseXorParams

STUDY = get_study("sparse_xor")
C_GRID = StepGrid(-2.0, 6.0, 2)
CPU = torch.device("cpu")


TRAIN = {"train": {"steps": 1000, "batch_size": 128}}


def _rec(sweep: str, config: dict, metrics: dict, status: str = "ok", run_id: str = ""):
    return types.SimpleNamespace(sweep=f"sparse_xor/{sweep}", config=config, metrics=metrics, status=status,
                                 run_id=run_id or f"{sweep}-{id(metrics)}", seconds=1.0, seed=config.get("seed"))  # fmt: skip


# -- the jobs at small d -------------------------------------------------------------------------------------
def test_one_step_softmax_succeeds_at_a_c_of_order_one_and_linear_never() -> None:
    wins, lows = 0, []
    for seed in range(4):
        r = one_step(OneStepConfig(d=128, seed=seed, grid=C_GRID, sign_samples=200))
        w = window(succeeded(r["loss"], r["spec"], SUCCESS), r["log10_grid"])
        if w.lo is not None:
            wins += 1
            lows.append(w.lo)
            assert w.contiguous and w.open_top  # the working set is [c_min, top of the grid]
    assert wins >= 3 and all(-1.0 <= c <= 3.0 for c in lows)  # c_min = η_min/(d²·ln d) is O(1)
    assert r["loss0"] == pytest.approx(1.0, abs=0.05) and r["grid_unit"] == "c"
    lin = one_step(
        OneStepConfig(d=128, attention="linear", grid=StepGrid(-8, 16, 1), grid_unit="eta")
    )
    assert not any(succeeded(lin["loss"], lin["spec"], SUCCESS))


def test_step_sizes_are_in_units_of_the_theory() -> None:
    eta = step_sizes(StepGrid(0.0, 2.0, 1), "c", 64)
    assert torch.allclose(
        eta, torch.tensor([1.0, 10.0, 100.0], dtype=torch.float64) * 64 * 64 * math.log(64)
    )
    assert theory_scale(64) == pytest.approx(64**2 * math.log(64))
    assert StepGrid(0.0, 6.0, 1 / 3).log10().tolist() == [0.0, 3.0, 6.0]


def test_chunked_scan_matches_the_whole_scan(monkeypatch) -> None:
    model = two_head(64, 18, "softmax", 2, CPU)
    p, q = model.support
    params = torch.stack([model.theta, model.theta_tilde]).detach()
    etas = step_sizes(C_GRID, "c", 64)
    whole = one_step_scan(model.V, params, "softmax", p, q, etas)
    monkeypatch.setattr(two_head_steps, "CHUNK_ELEMENTS", 2 * 64 * 3)  # 3 step sizes a chunk
    parts = one_step_scan(model.V, params, "softmax", p, q, etas)
    assert torch.equal(whole.loss, parts.loss) and torch.equal(whole.spec, parts.spec)


def test_nested_draw_gives_the_same_step_as_its_explicit_embeddings() -> None:
    emb = NestedEmbeddings(300, 24, seed=5)
    V8, V24 = emb.V(8), emb.V(24)
    assert torch.allclose(V8.norm(dim=1), torch.ones(300, dtype=torch.float64))
    # V_8 is the normalised prefix of the same rows as V_24: the m grid shares common random numbers
    prefix = V24[:, :8] / V24[:, :8].norm(dim=1, keepdim=True)
    assert torch.allclose(prefix, V8)
    p, q = 7, 200
    etas = step_sizes(C_GRID, "c", 300)
    for m, scan in zip((8, 24), nested_m_scan(emb, [8, 24], "softmax", p, q, etas)):
        theta = emb.theta(m)
        ref = one_step_scan(emb.V(m), torch.stack([theta, -theta]), "softmax", p, q, etas)
        assert torch.allclose(scan.loss, ref.loss, rtol=1e-9, atol=1e-12)
        assert torch.allclose(scan.spec, ref.spec, rtol=1e-9, atol=1e-12)
    with pytest.raises(UserError, match="outside"):
        nested_m_scan(emb, [32], "softmax", p, q, etas)


def test_nested_scan_is_the_same_in_groups_of_any_size_and_without_the_cache(monkeypatch) -> None:
    ms, etas = [3, 8, 13, 24], step_sizes(C_GRID, "c", 300)
    # the draw in chunks of 64 rows (ROWS is part of the draw)
    monkeypatch.setattr(two_head_scaling, "ROWS", 64)
    whole = nested_m_scan(NestedEmbeddings(300, 24, seed=5), ms, "softmax", 7, 200, etas)
    monkeypatch.setattr(two_head_scaling, "GROUP_BYTES", 32 * 300)  # one m a group
    monkeypatch.setattr(two_head_scaling, "CACHE_BYTES", 0)  # the draw redrawn for every pass
    parts = nested_m_scan(NestedEmbeddings(300, 24, seed=5), ms, "softmax", 7, 200, etas)
    for a, b in zip(whole, parts):
        assert a.m == b.m and a.loss0 == pytest.approx(b.loss0, rel=1e-12)
        assert torch.allclose(a.loss, b.loss, rtol=1e-9, atol=1e-12) and torch.equal(
            a.spec > 0.9, b.spec > 0.9
        )


def test_sample_ladder_step_is_the_exact_finite_sample_gradient() -> None:
    model = two_head(32, 12, "softmax", 1, CPU)
    p, q = model.support
    params = torch.stack([model.theta, model.theta_tilde]).detach()
    etas = step_sizes(C_GRID, "c", 32)
    rows = sample_ladder(model.V, params, "softmax", p, q, [64, 256], etas,
                         torch.Generator().manual_seed(3), select=100, block=100)  # fmt: skip
    # the same strings, drawn in the same blocks (64; then 100, 92), and the reference gradient
    g = torch.Generator().manual_seed(3)
    x = torch.cat(
        [torch.randint(0, 2, (k, 32), generator=g, dtype=torch.int8) for k in (64, 100, 92)]
    )
    x = 2 * x.double() - 1
    y = -x[:, p] * x[:, q]
    _, grad = sample_grad(model.V, params, "softmax", x, y)
    s0 = params @ model.V.T
    loss, _, sel = scan_scores(s0, grad @ model.V.T, etas, "softmax", p, q, x[:100], y[:100])
    assert sel is not None and rows[-1].index == int(sel.argmin())
    assert rows[-1].loss == pytest.approx(float(loss[rows[-1].index]), rel=1e-9)
    population = one_step_scan(model.V, params, "softmax", p, q, etas)
    assert not torch.allclose(loss, population.loss)  # 256 strings are not the population


def test_jobs_validate_input() -> None:
    with pytest.raises(UserError, match="attention kind"):
        one_step(OneStepConfig(d=16, attention="cosine"))  # type: ignore[arg-type]
    with pytest.raises(UserError, match="step grid"):
        StepGrid(3.0, 1.0, 2).log10()
    with pytest.raises(UserError, match="steps"):
        many_steps(ManyStepsConfig(d=16, steps=0))
    with pytest.raises(UserError, match="m_grid"):
        min_m(MinMConfig(d=16, m_grid=[8, 4]))
    with pytest.raises(UserError, match="n_grid"):
        samples(SamplesConfig(d=16, n_grid=[64, 32]))


# -- bookkeeping ---------------------------------------------------------------------------------------------
def test_windows_shared_step_sizes_and_smallest_sizes() -> None:
    assert window([False, True, True, False], [0, 1, 2, 3]).lo == 1
    w = window([False, False], [0.0, 1.0])
    assert w.lo is None and w.decades is None  # no working step size, not a step size at the edge
    assert not window([True, False, True], [0, 1, 2]).contiguous
    # a plateau of the maximum count: its centre, not its first point
    assert shared_index([[0, 1, 1, 1, 1], [0, 0, 1, 1, 1]]) == 3
    assert shared_index([[0, 0], [0, 0]]) is None
    frac = {4: 0.5, 8: 0.75, 16: 0.5, 32: 1.0, 64: 1.0}
    assert m_star(frac, 0.75, "stays") == 32 and m_star(frac, 0.75, "first") == 8
    assert m_star({4: 0.1, 8: 0.2}, 0.75) is None
    rows = [{"n": 32, "loss": 0.9, "spec": 0.1}, {"n": 64, "loss": 0.01, "spec": 1.0},
            {"n": 128, "loss": 0.5, "spec": 0.5}, {"n": 256, "loss": 0.0, "spec": 1.0}]  # fmt: skip
    assert n_star(rows, SUCCESS, "stable") == 256 and n_star(rows, SUCCESS, "first") == 64
    assert n_star(rows[:1], SUCCESS) is None


def test_ffnn_width_is_the_smallest_that_keeps_the_seed_fraction() -> None:
    recs = []
    for d, ok_widths in ((16, {2: 4, 4: 4}), (64, {2: 2, 4: 4})):
        for w, hits in ok_widths.items():
            for s in range(4):
                recs.append(_rec(f"ffnn_d{d}_s{s}", {**TRAIN, "task": {"n": d}, "model": {"width": w}},
                                 {"test_loss": 0.01 if s < hits else 0.6, "trainable_params": w * (d + 2) + 1,
                                  "converged_step": 100 * (s + 1) if s < hits else None}))  # fmt: skip
    recs.append(
        _rec(
            "ffnn_d64_s9",
            {**TRAIN, "task": {"n": 64}, "model": {"width": 4}},
            {},
            status="diverged",
        )
    )
    out = {w.d: w for w in ffnn_widths(recs, 0.05, 0.75)}
    assert out[16].width == 2 and out[16].params == 2 * 18 + 1
    assert out[64].width == 4 and out[64].fractions[4] == pytest.approx(4 / 5)  # diverged = failure
    # strings seen until the convergence check, median over the width's finished seeds (100..400 steps × 128)
    assert out[16].strings == pytest.approx(250 * 128) and out[64].strings == pytest.approx(
        250 * 128
    )


def test_a_kind_that_never_succeeds_has_no_working_step_size() -> None:
    grid = [-2.0, 0.0, 2.0]
    recs = []
    for seed in range(8):
        for kind, loss in (("softmax", [0.9, 0.01, 0.0]), ("linear", [428.0, 2.7, 50.0])):
            spec = [0.0, 0.95, 1.0] if kind == "softmax" else [0.0, 0.2, 1.2]
            recs.append(_rec("kinds", {"attention": kind, "seed": seed, "d": 64},
                             {"loss": loss, "spec": spec, "loss0": loss[0], "log10_grid": grid, "d": 64, "m": 18},
                             run_id=f"{kind}{seed}"))  # fmt: skip
    results = StudyResults(recs, "quick", "sparse_xor")
    e = ev.kinds_one_step(results, {"eta": "per_draw", "d": 64})
    by_kind = {k: [o.y for o in e.obs if o.group == k] for k in ("softmax", "linear")}
    assert by_kind == {"softmax": [1.0] * 8, "linear": [0.0] * 8}
    table = next(x for x in exhibits.kinds(results, Plan("quick", TINY)) if hasattr(x, "rows"))
    row = {r[0]: r for r in table.rows}
    assert row["linear s"][4] == "none (no working step size)" and row["linear s"][3] == "0/8"
    assert row["softmax"][4] == "10^0" and row["linear s"][2].startswith("2.7 at η = 10^0")


# -- the censored sample-size fit on synthetic data ----------------------------------------------------------
def _synthetic_samples(
    alpha: float, budget_log2: int, seeds: int = 12, seed: int = 0, scatter: float = 0.2
) -> list:
    """Draws whose first stable n on a doubling grid is ≈ 2·d^alpha (log-normal scatter); those above the
    budget never succeed within the ladder (their rows all fail)."""
    rng = np.random.default_rng(seed)
    recs = []
    grid = [2**k for k in range(5, budget_log2 + 1)]
    for d in (16, 32, 64, 128, 256, 512, 1024):
        for s in range(seeds):
            need = 2 * d**alpha * 10 ** rng.normal(0, scatter)
            rows = [
                {"n": n, "loss": 0.0 if n >= need else 0.9, "spec": 1.0 if n >= need else 0.1}
                for n in grid
            ]
            recs.append(_rec("samples", {"d": d, "seed": s},
                             {"n_max": grid[-1], "rows": rows, "population_loss": [0.0], "population_spec": [1.0]},
                             run_id=f"{d}-{s}"))  # fmt: skip
    return recs


def test_censored_fit_recovers_a_known_exponent_and_dropping_censored_draws_biases_it_down() -> (
    None
):
    # n* ≈ 2·d^1.5 with 0.4 decades of scatter against a budget of 2^15: d ≥ 256 is censored in part
    recs = _synthetic_samples(alpha=1.5, budget_log2=15, seeds=16, scatter=0.4)
    results = StudyResults(recs, "quick", "sparse_xor")
    choices = {"n_rule": "stable", "population_failures": "excluded", "success_loss": SUCCESS.loss}
    e = ev.samples(results, choices)
    assert sum(o.censored for o in e.obs) >= 4 and e.details["censored"] >= 4
    rule = CensoredTrend("softmax", within(1.3, 1.7, 0.2), x="log10 d", y="log10 n*")
    j = judge(rule, e, Units("draw", 4))
    assert j.decision is not None and j.decision.statistic is not None
    est = j.decision.statistic
    assert (
        est.lo < 1.5 < est.hi and abs(est.value - 1.5) < 0.15
    )  # known exponent inside the interval
    dropped = ev.samples(results, {**choices, "censored": "drop"})
    naive = ols([o.x for o in dropped.obs], [o.y for o in dropped.obs])
    assert naive.slope < est.value - 0.05  # dropping the censored draws flattens the slope


def test_sample_claim_tells_d_log_d_from_d_squared() -> None:
    claim = next(c for c in STUDY.claims(STUDY.plan("quick")) if c.slug == "samples")
    # d = 16..1024 lies outside the (asymptotic) regime: either direction is qualified so
    for alpha, verdict in ((1.15, "reproduced"), (2.0, "not reproduced")):
        qualifier = "outside regime"
        results = StudyResults(
            _synthetic_samples(alpha, budget_log2=26, seeds=16), "quick", "sparse_xor"
        )
        row = evaluate(claim, results, "sparse_xor", "quick")
        assert (row.verdict, row.qualifier) == (verdict, qualifier)


# -- the declaration and a tiny plan end to end --------------------------------------------------------------
def test_every_claim_is_declared_with_rule_units_control_alternatives_and_history() -> None:
    claims = claims_module.claims(STUDY.plan("quick"))
    assert [c.slug for c in claims] == ["one-step", "step-size", "kinds-one-step", "kinds-many-steps",
                                        "polylog-m", "samples", "ffnn"]  # fmt: skip
    for c in claims:
        assert c.all_alternatives() and c.rule.text() and c.units.kind and c.control.name
    ffnn = next(c for c in claims if c.slug == "ffnn")
    assert [r.rule.version for r in ffnn.history] == [4, 3, 2, 1] and ffnn.rule.version == 5
    assert all(r.choices.get("y") == "parameters" for r in ffnn.history)  # v1–v4 read parameters
    many = next(c for c in claims if c.slug == "kinds-many-steps")
    assert many.rule.version == 3 and [r.rule.version for r in many.history] == [2, 1]
    assert all(r.choices == {"eta_grid": "1_per_decade"} for r in many.history)
    polylog = next(c for c in claims if c.slug == "polylog-m")
    assert polylog.rule.version == 3 and [r.rule.version for r in polylog.history] == [2, 1]
    assert all(c.regime is not None for c in claims)
    for scale in ("quick", "paper"):
        for s in STUDY.sweeps(STUDY.plan(scale)):
            assert s.name.startswith("sparse_xor/") and s.expand()


TINY = SparseXorParams(
    one_step_d=(16, 64, 256), one_step_seeds=8, c_grid=(-2.0, 6.0, 2),
    kinds_d=(64, 32), kinds_seeds=8, eta_grid=(-8.0, 16.0, 1),
    many_seeds=4, many_steps=12, many_grid=(-4.0, 12.0, 1),
    m_d=(16, 64, 128, 256, 512, 1024), m_seeds=4, m_grid=(2, 4, 8, 16, 32), m_c_grid=(0.0, 6.0, 1 / 3),
    samples_d=(16, 32, 64), samples_seeds=4, n_max_log2=12,
    ffnn_d=(16, 32, 64), ffnn_widths=(1, 2), ffnn_seeds=1, ffnn_steps=20,
)  # fmt: skip


def test_tiny_plan_end_to_end(tmp_path: Path) -> None:
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store

    plan = Plan("quick", TINY)
    store = Store(tmp_path / "store")
    run_sweep(STUDY.sweeps(plan), store, workers=0, progress=False)
    records = store.records()
    assert records and all(r.status == "ok" for r in records), [r.error for r in records]
    report = analyse_records(STUDY, records, plan, tmp_path / "figures")
    assert [c.id.split("/")[1] for c in report.claims] == [c.slug for c in STUDY.claims(plan)]
    for c in report.claims:
        row = c.as_json()
        assert row["verdict"] in ("reproduced", "not reproduced", "inconclusive", "vacuous")
        assert set(row["rule"]) == {"id", "version", "text"} and row["rule"]["text"]
        assert row["control"]["name"] and row["units"]["kind"] and row["robustness"]
        assert row["history"][0]["version"] == c.rule["version"] and row["measured"]
    by = {c.id.split("/")[1]: c for c in report.claims}
    # the FFNN trained 20 steps fails at every width: v5 says the grid does not bracket w* (censored above 2);
    # v4 read it as the pipeline's failure, and the relaxed pre-engine rule is shown as vacuous
    assert "does not bracket" in by["ffnn"].measured and "w* > 2" in by["ffnn"].measured
    assert by["ffnn"].verdict == "inconclusive"
    assert [h["verdict"] for h in by["ffnn"].history][3] == "vacuous"
    assert by["one-step"].details["rule"]["paired"] is True
    names = {f.name for f in report.figures}
    assert {"one_step", "attention_kinds", "min_m", "samples", "ffnn"} <= names, names
    assert all(f.png.exists() for f in report.figures)


# -- the issue-21 fixes on synthetic records -----------------------------------------------------------------
def _min_m(d: int, seed: int, need: float, grid: tuple[int, ...]) -> types.SimpleNamespace:
    """A nested m scan (one step size) whose draw succeeds exactly at m ≥ need."""
    ok = [m >= need for m in grid]
    return _rec("min_m", {"d": d, "seed": seed},
                {"m_grid": list(grid), "loss": [[0.0 if o else 1.0] for o in ok],
                 "spec": [[1.0 if o else 0.0] for o in ok]}, run_id=f"mm{d}-{seed}")  # fmt: skip


def test_m_star_reads_only_m_up_to_d() -> None:
    # at d = 16 both heads land on one target at m = 64 > d: v3 read it and had no m*; m ≤ d gives 8
    grid = (4, 8, 16, 32, 64)
    recs = [_min_m(16, s, 8 if s < 3 else 64, grid) for s in range(4)]
    recs = [_rec("min_m", r.config, {**r.metrics, "loss": [*r.metrics["loss"][:4], [1.0]],
                                     "spec": [*r.metrics["spec"][:4], [0.0]]}) for r in recs]  # fmt: skip
    results = StudyResults(recs, "quick", "sparse_xor")
    assert ev.m_fractions(recs, SUCCESS) == {4: 0.0, 8: 0.75, 16: 0.75}
    assert ev.m_stars(results, SUCCESS, 0.75) == {16: 8}
    assert ev.m_stars(results, SUCCESS, 0.75, cap=False) == {16: None}


def _polylog_results(need, seeds: int = 8) -> StudyResults:
    grid = tuple(range(2, 200))
    recs = [_min_m(2**k, s, need(2**k, s), grid) for k in range(6, 21) for s in range(seeds)]
    return StudyResults(recs, "quick", "sparse_xor")


def test_polylog_rule_needs_every_m_analysis() -> None:
    claim = next(c for c in STUDY.claims(STUDY.plan("quick")) if c.slug == "polylog-m")
    assert set(claim.rule.groups()) == set(ev.M_VARIANTS)  # one fit per declared m* analysis
    # seed s needs m ≥ (1 + s/20)·(ln d)^1.5: every quantile of m* is polylog
    polylog = _polylog_results(lambda d, s: (1 + s / 20) * math.log(d) ** 1.5)
    row = evaluate(claim, polylog, "sparse_xor", "quick")
    assert row.verdict == "reproduced" and row.history[1]["verdict"] == "reproduced"
    assert row.qualifier == "outside regime"  # d ≤ 2^20: the positive is counted apart too
    power = _polylog_results(lambda d, s: (1 + s / 20) * 2 * d**0.2)
    row = evaluate(claim, power, "sparse_xor", "quick")  # d ≤ 2^20 lies outside "d → ∞"
    assert (row.verdict, row.qualifier) == ("not reproduced", "outside regime")
    # two of eight seeds never succeed at the largest d: τ = 0.875 has no m* there, so the rule cannot pass
    # although the headline analysis alone (v2) still does
    gap = _polylog_results(
        lambda d, s: 1e9 if d == 2**20 and s >= 6 else (1 + s / 20) * math.log(d) ** 1.5
    )
    row = evaluate(claim, gap, "sparse_xor", "quick")
    assert row.verdict == "inconclusive" and row.history[1]["verdict"] == "reproduced"
    assert "τ=0.875: no m ≤ d on the grid reaches the fraction at d = [1048576]" in row.measured


def _one_step(d: int, seed: int, first: int, grid: list[float]) -> types.SimpleNamespace:
    ok = [i >= first for i in range(len(grid))]
    return _rec("one_step", {"d": d, "seed": seed},
                {"log10_grid": grid, "loss": [0.0 if o else 0.9 for o in ok], "spec": [1.0 if o else 0.1 for o in ok],
                 "loss0": 1.0, "spec0": 0.0}, run_id=f"os{d}-{seed}")  # fmt: skip


def test_one_step_reports_success_against_c_and_the_plateau_centre() -> None:
    grid = [-1.0, 0.0, 1.0, 2.0, 3.0]
    firsts = [1, 2, 2, 2, 1, 2, 3, 4]  # seeds 0..3 calibrate, 4..7 are judged
    recs = [_one_step(d, s, f, grid) for d in (64, 256) for s, f in enumerate(firsts)]
    results = StudyResults(recs, "quick", "sparse_xor")
    e = ev.one_step(results, {"eta": "one_c"})
    # calibration counts 0, 2, 8, 8, 8 (both d): the plateau 10^1..10^3, its centre 10^2
    assert e.details["log10_c_star"] == {64: 2.0, 256: 2.0}
    assert (
        e.details["success_by_c"]["succeeded"] == [0, 2, 4, 6, 8]
        and e.details["success_by_c"]["draws"] == 8
    )
    assert "2/8 at c = 10^0, 4/8 at c = 10^1" in e.notes
    assert sum(o.y for o in e.obs if o.group == "step") == 6  # judged draws at c* = 10^2
    # the theorem's order with constant 10, no calibration
    fixed = ev.one_step(results, {"eta": "c=10"})
    assert (
        fixed.details["log10_c_star"][64] == 1.0
        and sum(o.y for o in fixed.obs if o.group == "step") == 4
    )


def test_ffnn_states_both_axes_and_compares_at_the_same_data_budget() -> None:
    recs = []
    for d, need_m, needed in ((64, 8, 2**12), (256, 16, 2**15), (1024, 32, 2**20)):
        recs += [_min_m(d, s, need_m, (4, 8, 16, 32, 64)) for s in range(4)]
        for s in range(4):
            rows = [{"n": 2**k, "loss": 0.0 if 2**k >= needed else 0.9, "spec": 1.0 if 2**k >= needed else 0.0}
                    for k in range(5, 19)]  # fmt: skip
            recs.append(
                _rec(
                    "samples",
                    {"d": d, "seed": s},
                    {
                        "m": d // 8,
                        "n_max": 2**18,
                        "rows": rows,
                        "population_loss": [0.0],
                        "population_spec": [1.0],
                    },
                )
            )
            for w in (1, 2, 4):  # width 1 cannot fit XOR: its MSE stays near 2/3
                recs.append(_rec(f"ffnn_d{d}_s{s}", {**TRAIN, "task": {"n": d}, "model": {"width": w}},
                                 {"test_loss": 0.001 if w > 1 else 0.66, "trainable_params": w * (d + 2) + 1,
                                  "converged_step": 500 if w > 1 else None}))  # fmt: skip
    results = StudyResults(recs, "quick", "sparse_xor")
    choices = {"fraction": 0.75, "data": "population", "y": "parameters"}  # the v4 reading
    e = ev.ffnn(results, choices)
    params = {
        (o.group, round(10**o.x)): round(10**o.y) for o in e.obs if o.group != "transformer_all"
    }
    # the FFNN's width·(d+2)+1 and the transformer's 2m* from the population step
    assert params[("ffnn", 64)] == 2 * 66 + 1 and params[("transformer", 1024)] == 64
    assert e.details["ffnn"]["1024"]["strings"] == 500 * 128
    assert e.details["transformer_finite_sample"]["1024"] == {
        "params": 256,
        "median_n_star": 2**19,
        "within_ladder": 0.0,
    }
    assert "d=1024: 2053 / 64,000" in e.notes and "d=1024: 64 / ∞" in e.notes
    # the finite-sample step learns at d ≤ 256 (its 2m beside the FFNN), not within the ladder (2^18) at d = 1024
    # (n* = 2^20, counted as twice the ladder's budget): that comparison has no transformer there
    finite = ev.ffnn(results, {**choices, "data": "finite_sample"})
    assert finite.missing and "d = [1024]" in finite.missing
    finite = ev.ffnn(StudyResults([r for r in recs if "1024" not in r.sweep and r.config.get("d") != 1024], "quick",
                                  "sparse_xor"), {**choices, "data": "finite_sample"})  # fmt: skip
    assert {round(10**o.y) for o in finite.obs if o.group == "transformer"} == {16, 64}


# -- issue 34: the FFNN judged by its minimal width, the many-step grid at 4 points a decade ------------------
FFNN_D = (16, 32, 64, 128, 256, 512, 1024)


def _ffnn_results(need_w, need_m, widths=(1, 2, 3, 4), seeds: int = 8) -> StudyResults:
    """Synthetic FFNN runs (seed s at width w reaches MSE 0.001 iff w ≥ need_w(d, s); width 1 never: one ReLU
    cannot fit XOR) and the transformer's m scans (every draw succeeds at m ≥ need_m(d))."""
    recs = []
    for d in FFNN_D:
        recs += [_min_m(d, s, need_m(d), (2, 4, 8, 16, 32, 64, 128, 256)) for s in range(4)]
        for s in range(seeds):
            for w in widths:
                ok = w >= need_w(d, s)
                recs.append(_rec(f"ffnn_d{d}_s{100 + s}", {**TRAIN, "task": {"n": d}, "model": {"width": w}},
                                 {"test_loss": 0.001 if ok else 0.66, "trainable_params": w * (d + 2) + 1,
                                  "converged_step": 400 if ok else None}, run_id=f"ff{d}-{s}-{w}"))  # fmt: skip
    return StudyResults(recs, "quick", "sparse_xor")


def _ffnn_claim():
    return next(c for c in STUDY.claims(STUDY.plan("quick")) if c.slug == "ffnn")


def test_ffnn_minimal_width_is_bracketed_or_censored() -> None:
    res = _ffnn_results(lambda d, s: 2 if d < 1024 else (3 if s < 6 else 9), lambda d: 8)
    out = {w.d: w for w in ffnn_widths(ev.ffnn_records(res), 0.05, 0.75)}
    assert out[64].width == 2 and out[64].censored is None and out[64].text() == "2"
    assert out[64].fractions == {1: 0.0, 2: 1.0, 3: 1.0, 4: 1.0}
    assert out[1024].width == 3 and out[1024].fractions[3] == 0.75 and out[1024].censored is None
    # no width reaches 3/4 of the seeds: censored above the grid, not a minimum
    res = _ffnn_results(lambda d, s: 2 if d < 1024 else 9, lambda d: 8)
    w = {w.d: w for w in ffnn_widths(ev.ffnn_records(res), 0.05, 0.75)}[1024]
    assert (w.width, w.censored, w.text()) == (None, "above", "> 4")
    e = ev.ffnn(res, {"fraction": 0.75, "data": "population"})
    assert e.missing and "d = 1024: w* > 4" in e.missing and "censored" in e.missing
    # a grid without width 1 where width 2 already succeeds: w* ≤ 2, censored below (v5), though v4 read 2
    res = _ffnn_results(lambda d, s: 2, lambda d: 8, widths=(2, 3, 4))
    e = ev.ffnn(res, {"fraction": 0.75, "data": "population"})
    assert e.missing and "d = 16: w* ≤ 2" in e.missing
    assert not ev.ffnn(res, {"fraction": 0.75, "data": "population", "y": "parameters"}).missing
    # width 1 fitting XOR is impossible: the pipeline, not the claim
    res = _ffnn_results(lambda d, s: 1 if s == 0 else 2, lambda d: 8)
    assert "width 1 reaches" in (
        ev.ffnn(res, {"fraction": 0.75, "data": "population"}).pipeline or ""
    )


def test_ffnn_v5_judges_the_minimal_width_against_m_star() -> None:
    claim = _ffnn_claim()
    assert claim.rule.version == 5 and set(claim.rule.groups()) == {"ffnn", "transformer"}
    # w* = 2 at every d (bracketed: width 1 fails); m* = 4 up to d = 64, 8 above: the sizes' slopes 0 and ≈ 0.17
    polylog = _ffnn_results(lambda d, s: 2, lambda d: 4 if d <= 64 else 8)
    e = ev.ffnn(polylog, {"fraction": 0.75, "data": "population"})
    sizes = {(o.group, round(10**o.x)): round(10**o.y) for o in e.obs}
    assert (
        sizes[("ffnn", 1024)] == 2
        and sizes[("transformer", 1024)] == 8
        and sizes[("transformer", 16)] == 4
    )
    assert "d=1024: 2 (0/1/1/1)" in e.notes
    row = evaluate(claim, polylog, "sparse_xor", "quick")
    assert row.verdict == "reproduced", row.measured
    # the v4 reading of the same data (parameters at w*) also passes: its FFNN half holds for any constant width
    assert row.history[1]["version"] == 4 and row.history[1]["verdict"] == "reproduced"
    # a transformer whose m* grows as d/8 (slope 1): log w* − log m* has slope −1, below −0.75
    power = _ffnn_results(lambda d, s: 2, lambda d: d / 8)
    assert evaluate(claim, power, "sparse_xor", "quick").verdict == "not reproduced"
    # an FFNN whose minimal width shrinks from 32 at d = 16 to 2 at d = 1024 (slope −2/3): the FFNN half fails
    # on the width itself, with no help from the dense layer's d
    shrink = _ffnn_results(lambda d, s: 2 ** round(5 - 4 * math.log(d / 16, 64)), lambda d: 8,
                           widths=(1, 2, 4, 8, 16, 32))  # fmt: skip
    e = ev.ffnn(shrink, {"fraction": 0.75, "data": "population"})
    assert {round(10**o.y) for o in e.obs if o.group == "ffnn"} == {32, 16, 8, 4, 2}
    row = evaluate(claim, shrink, "sparse_xor", "quick")
    assert row.verdict == "not reproduced", row.measured
    assert row.details["rule"]["slope"]["hi"] < -0.5


def _many(
    kind: str, seed: int, firsts: dict[float, int], grid: list[float]
) -> types.SimpleNamespace:
    first = [firsts.get(g) for g in grid]
    done = [f for f in first if f is not None]
    return _rec("many_steps", {"d": 512, "seed": seed, "attention": kind, "steps": 50},
                {"log10_eta": grid, "first_success": first, "steps_to_success": min(done) if done else None,
                 "m": 41}, run_id=f"ms-{kind}-{seed}")  # fmt: skip


def test_steps_to_success_on_the_coarse_grid_is_read_from_the_fine_one() -> None:
    grid = [k / 4 for k in range(-8, 9)]  # 10^-2..10^2 at 4 a decade
    r = _many("sigmoid", 200, {0.25: 5, 0.5: 3, 1.0: 30}, grid)
    assert ev.steps_to_success(r) == 3 and ev.steps_to_success(r, 1.0) == 30
    assert ev.steps_to_success(_many("erf", 200, {0.75: 4}, grid), 1.0) is None


def test_kinds_many_steps_sees_a_window_between_decades() -> None:
    """sigmoid succeeds in 3–5 steps only between integer log10 η: the 4-a-decade grid (v3) sees it and the
    claim no longer passes (a paired difference 0 [−0.28, 0.28] on 10 draws: inconclusive, its interval reaches
    the 0.25 bar); the 1-a-decade reading of the same runs (v2, issue 34's old rule) misses it and passes."""
    claim = next(c for c in STUDY.claims(STUDY.plan("quick")) if c.slug == "kinds-many-steps")
    grid = [k / 4 for k in range(-8 * 4, 16 * 4 + 1)]
    assert len(grid) == 97  # the quick plan's grid: 10^-8..10^16 at 4 a decade
    recs = []
    for s in range(200, 210):
        recs.append(_many("softmax", s, {2.0: 1, 2.25: 1}, grid))
        recs.append(_many("sigmoid", s, {3.25: 3, 3.5: 5}, grid))
        recs += [_many(k, s, {}, grid) for k in ("linear", "erf", "linear_norm", "erf_norm")]
    results = StudyResults(recs, "quick", "sparse_xor")
    fine = ev.kinds_many_steps(results, {"d": 512, "within": 10})
    assert (
        sum(o.y for o in fine.obs if o.group == "sigmoid") == 10
        and fine.details["eta_points"] == 97
    )
    coarse = ev.kinds_many_steps(results, {"d": 512, "within": 10, "eta_grid": "1_per_decade"})
    assert (
        sum(o.y for o in coarse.obs if o.group == "sigmoid") == 0
        and coarse.details["eta_points"] == 25
    )
    assert sum(o.y for o in coarse.obs if o.group == "softmax") == 10
    row = evaluate(claim, results, "sparse_xor", "quick")
    assert row.verdict == "inconclusive" and "sigmoid(s − ln d): 1 [0.722, 1]" in row.measured, (
        row.measured
    )
    assert row.history[1]["version"] == 2 and row.history[1]["verdict"] == "reproduced"
    assert "sigmoid: 10/10" in fine.notes


def test_quick_plan_moves_the_changed_claims_to_fresh_seeds() -> None:
    sweeps = {s.name: s for s in STUDY.sweeps(STUDY.plan("quick"))}
    many = sweeps["sparse_xor/many_steps"]
    assert many.seeds == list(range(200, 210)) and many.base["grid"] == {
        "lo": -8.0,
        "hi": 16.0,
        "per_decade": 4,
    }
    ffnn = [s for n, s in sweeps.items() if n.startswith("sparse_xor/ffnn_d")]
    seeds = {x for s in ffnn for x in s.seeds}
    assert seeds == set(range(100, 108)) and len(ffnn) == 56
    assert all(
        s.zip == {"model.width": [1, 2, 3, 4], "train.steps": [200, 1000, 1000, 1000]} for s in ffnn
    )
    # disjoint from every seed the study used before issue 34 (FFNN 0–11, many steps 0–9) and from the
    # other sweeps' seeds now
    others = {x for n, s in sweeps.items() if n != "sparse_xor/many_steps" and not n.startswith("sparse_xor/ffnn_d")
              for x in s.seeds}  # fmt: skip
    assert not (seeds | set(many.seeds)) & (set(range(12)) | others)
    assert not seeds & set(many.seeds)


def test_quick_cuts_of_issue_36_leave_the_paper_plan_and_the_read_numbers() -> None:
    quick, paper = STUDY.plan("quick"), STUDY.plan("paper")
    # the paper plan's FFNN runs every width on its full budget (run ids as before: the same configs)
    for s in STUDY.sweeps(paper):
        if s.name.startswith("sparse_xor/ffnn_d"):
            assert set(s.zip["train.steps"]) == {paper.params.ffnn_steps}
    assert max(paper.params.m_d) == 2**24 and paper.params.many_steps == 2000
    # quick: only width 1 (which cannot fit XOR) is shortened; the m scan stops at 2^18; 20 steps ≥ K = 10
    runs = [
        r for s in STUDY.sweeps(quick) if s.name.startswith("sparse_xor/ffnn_d") for r in s.expand()
    ]
    assert {(r.config.model.width, r.config.train.steps) for r in runs} == {
        (1, 200),
        (2, 1000),
        (3, 1000),
        (4, 1000),
    }
    assert max(quick.params.m_d) == 2**18 and min(quick.params.m_d) == 16
    claim = next(c for c in STUDY.claims(quick) if c.slug == "kinds-many-steps")
    assert quick.params.many_steps >= 2 * claim.choices[0].default
    # the budget cut does not change a first success within it
    short, long = (
        many_steps(ManyStepsConfig(d=32, steps=k, grid=StepGrid(-2.0, 12.0, 1))) for k in (20, 50)
    )
    assert 30 in long["first_success"]  # a first success after 20 steps: only it is lost
    assert short["first_success"] == [
        f if f is not None and f <= 20 else None for f in long["first_success"]
    ]
