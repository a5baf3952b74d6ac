"""Study `sensitivity`: tiny versions of every experiment run end to end (inline, into a temp store), the
claim rules on synthetic records, and facts that hold at tiny scale (FIRST is learned with sensitivity 1,
PARITY's target sensitivity is n, random completions are near n/2)."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from learnability.boolean import parity, random_function
from learnability.errors import UserError
from learnability.studies import sensitivity as S
from learnability.studies.legacy import FigureSink, StudyResults
from learnability.sweep.runner import run_sweep
from learnability.sweep.store import Store


def tiny_plan() -> S.Plan:
    return replace(
        S.PLANS["quick"],
        d_model=16, batch=64, steps=150, lr=3e-3, eval_every=50, seeds=[0, 1],
        tasks=["parity", "first"], ns=[3, 4, 5], directions=4,
        tradeoff_tasks=["parity"], tradeoff_ns=[3, 4], tradeoff_samples=2,
        dyn_n=3, dyn_wds=[0.0, 0.2], dyn_steps=150, dyn_every=50, dyn_seeds=[0], dyn_probe=32,
        gen_n=5, gen_sizes=[8, 16], gen_seeds=[0], gen_steps=150, gen_refit_steps=100,
        gen_completions=50, gen_refits=1,
        len_train=(1, 3), len_buckets=[[1, 3], [4, 5]], len_steps=100,
        scratch_n=4, scratch_steps=100, notes=("tiny test scale",),
    )  # fmt: skip


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """Every sweep of the study at a tiny scale, run inline into a temp store, then analysed."""
    S.PLANS["tiny"] = tiny_plan()
    try:
        root = tmp_path_factory.mktemp("sens")
        study = S.STUDY
        sweeps = study.sweeps("tiny")
        store = Store(root / "results")
        run_sweep(sweeps, store, workers=0, device="cpu", progress=False)
        records = [r for s in sweeps for r in store.records(sweep=s.name)]
        out = FigureSink(root / "figures", "sensitivity")
        claims = study.analyse(StudyResults(records, "tiny"), out)
        store.close()
        yield SimpleNamespace(sweeps=sweeps, records=records, out=out, claims=claims)
    finally:
        S.PLANS.pop("tiny", None)


def test_every_experiment_runs_and_is_reported(tiny_run):
    names = {s.name for s in tiny_run.sweeps}
    assert names == {f"sensitivity/{k}" for k in ("scaling", "tradeoff", "dynamics",
                     "generalisation", "length", "scratchpad", "scratchpad_plain")}  # fmt: skip
    bad = [(r.sweep, r.status, r.error) for r in tiny_run.records if r.status != "ok"]
    assert not bad, bad
    figures = {f.name for f in tiny_run.out.figures}
    assert {"scaling", "sharpness_bound", "tradeoff", "dynamics", "generalisation", "length",
            "scratchpad"} <= figures  # fmt: skip
    for f in tiny_run.out.figures:
        assert f.png.stat().st_size > 0 and f.pdf.stat().st_size > 0
    claims = [c.claim for c in tiny_run.claims]
    assert len(claims) == 13 and len(set(claims)) == 13
    for c in tiny_run.claims:
        assert c.scale == "tiny" and c.measured and c.verdict in ("reproduced", "not reproduced",
                                                                    "inconclusive")  # fmt: skip
    assert any("converged" in t.title for t in tiny_run.out.tables)


def test_scaling_records_carry_every_measurement(tiny_run):
    recs = [r for r in tiny_run.records if r.sweep == "sensitivity/scaling"]
    assert len(recs) == 2 * 3 * 2
    for r in recs:
        for key in (
            "sharpness",
            "sharpness_gauss",
            "blowup_paper",
            "blowup_published",
            "param_norm",
            "log10_lipschitz",
            "model_as",
            "model_as_real",
            "test_acc",
            "converged",
            "sharpness_wide",
            "sharpness_wide_rho",
        ):
            assert key in r.metrics, key
        # PARITY's target sensitivity is n, FIRST's is 1 (closed forms)
        want = r.config["task"]["n"] if r.config["task"]["function"] == "parity" else 1
        assert r.metrics["target_as"] == pytest.approx(want)
        # the wide radius is the published Gaussian scale: ε·√P with P the non-positional parameters
        assert r.metrics["sharpness_wide_rho"] > r.config["sharpness_rho"]


def test_first_is_learned_with_sensitivity_one(tiny_run):
    """A robust fact at tiny scale: FIRST converges, and the learned function's sensitivity is 1."""
    first = [r for r in tiny_run.records
             if r.sweep == "sensitivity/scaling" and r.config["task"]["function"] == "first"]  # fmt: skip
    assert first and all(r.metrics["converged"] for r in first)
    for r in first:
        assert r.metrics["model_as"] == pytest.approx(1.0)
        assert r.metrics["model_as_real"] == pytest.approx(1.0, abs=0.15)


def test_dynamics_and_generalisation_payloads(tiny_run):
    dyn = [r for r in tiny_run.records if r.sweep == "sensitivity/dynamics"]
    assert len(dyn) == 2
    for r in dyn:
        steps = [row["step"] for row in r.metrics["trajectory"]]
        assert steps == [0, 50, 100, 150]
    gen = [r for r in tiny_run.records if r.sweep == "sensitivity/generalisation"]
    assert len(gen) == 2
    for r in gen:
        # a transformer memorises 8–16 strings: the learned table (thresholded at 0.5) agrees on them
        assert r.metrics["train_acc"] >= 0.9
        assert len(r.metrics["completion_as"]) == 50
        assert 0 <= r.metrics["learned_as_quantile"] <= 1
        assert len(r.metrics["refit_completions"]) == 1
        assert r.metrics["refit_learned"]["sharpness"] >= 0


def test_real_average_sensitivity_matches_boolean_closed_forms():
    n = 6
    tt = torch.as_tensor(parity(n).truth_table(), dtype=torch.float64)
    assert S.real_average_sensitivity(tt, n) == pytest.approx(n)
    first = torch.as_tensor([(i & 1) for i in range(2**n)], dtype=torch.float64)
    assert S.real_average_sensitivity(first, n) == pytest.approx(1.0)
    # a constant-offset, scaled table: (T(x) − T(x'))² scales with the square
    assert S.real_average_sensitivity(0.5 * tt + 3, n) == pytest.approx(n / 4)
    with pytest.raises(UserError):
        S.real_average_sensitivity(tt[:-1], n)


def test_completions_keep_the_data_and_are_near_half_n():
    n = 8
    tt = random_function(n, seed=3).truth_table().astype(np.uint8)
    codes = np.arange(0, 2**n, 4)
    tables = S.completion_tables(n, codes, tt[codes], 400, seed=1)
    assert (tables[:, codes] == tt[codes]).all()
    sens = S.table_sensitivity(tables, n)
    # each bit flip changes a fair-coin-ish table half the time: as ≈ n/2
    assert abs(sens.mean() - n / 2) < 0.3
    assert S.table_sensitivity(parity(n).truth_table()[None].astype(np.uint8), n)[0] == n


def _rec(task, n, value, conv=True):
    return SimpleNamespace(config={"task": {"function": task, "n": n}},
                           metrics={"m": value, "converged": conv}, status="ok")  # fmt: skip


def test_growth_rule_on_synthetic_records():
    ns = [4, 6, 8, 10] * 3
    rng = np.random.default_rng(0)
    grow = {"parity": (ns, [n * 1.0 + rng.normal(0, 0.1) for n in ns]),
            "first": (ns, [1.0 + rng.normal(0, 0.1) for _ in ns])}  # fmt: skip
    assert S.growth_verdict(grow)[0] == "reproduced"
    both = {**grow, "first": (ns, [2.0 * n for n in ns])}
    assert S.growth_verdict(both)[0] == "not reproduced"
    flat = {"parity": (ns, [1.0 + rng.normal(0, 0.1) for _ in ns]), "first": grow["first"]}
    assert S.growth_verdict(flat)[0] == "inconclusive"
    few = {"parity": ([4, 4, 6], [1.0, 1.1, 2.0])}
    assert S.growth_verdict(few)[0] == "inconclusive"


def test_record_helpers():
    r = SimpleNamespace(config={"task": {"n": 5}}, metrics={"a": "inf", "b": None, "c": True})
    assert S.num(r, "a") == math.inf and math.isnan(S.num(r, "b")) and S.num(r, "c") == 1.0
    assert S.num(r, "task.n") == 5
    assert S.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert math.isnan(S.spearman([1, 2], [1, 2]))


def test_bad_scale_and_job_inputs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="scale"):
        S.STUDY.sweeps("huge")
    ctx = SimpleNamespace(device="cpu", run_dir=tmp_path, log=lambda *a: None)
    with pytest.raises(UserError, match="train_size"):
        S.generalisation_job(S.GeneralisationConfig(n=4, train_size=16), ctx)
    with pytest.raises(UserError, match="every"):
        S.dynamics_job(S.DynamicsConfig(every=0), ctx)
