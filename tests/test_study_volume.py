"""Study `volume`: the jobs (eps pairing, same-balance controls, fixed weights across N), the Theorem 4.5
cell labels, the analysis selections, and a tiny plan run end to end through the claims engine."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from learnability.boolean.balance import k0_positive_probability, same_balance_moments
from learnability.claims import VERDICTS, Frame, Obs
from learnability.errors import UserError
from learnability.jobs import volume as jobs
from learnability.measure.recogniser import logit_table, set_layernorm_eps
from learnability.models import build_model
from learnability.studies.base import Plan
from learnability.studies.pipeline import analyse_records
from learnability.studies.volume import STUDY
from learnability.studies.volume.evidence import plateau, select
from learnability.studies.volume.plan import QUICK, TRAINED_FUNCTIONS


# -- Theorem 4.5 cells --------------------------------------------------------------------------------------
def test_bound_cells_are_labelled_by_their_content():
    assert jobs.theorem_bound(14, 1, 16) == pytest.approx(14**2.5)  # 733
    assert jobs.bound_label(14, 1, 16) == "non-trivial"
    assert jobs.bound_label(10, 2, 32) == "non-trivial"  # 10^2.75 = 562 ≤ 1024
    assert jobs.bound_label(10, 1, 8) == "vacuous"  # exponent −1.5: bound < 1
    assert jobs.bound_label(10, 2, 16) == "vacuous"  # D ≤ 10L + 1 never has content
    assert jobs.bound_label(14, 1, 32) == "impossible"  # 14^10.5 > 2^14
    assert (
        jobs.bound_label(10, 1, 18) == "impossible" and jobs.bound_label(14, 1, 18) == "non-trivial"
    )
    assert jobs.bound_label(10, 1, 11) == "non-trivial"  # exponent 0: bound exactly 1
    # the label needs D > 10L + 1 (a positive exponent) for any N
    for depth in (1, 2, 4):
        for n in (10, 14, 20):
            assert jobs.bound_label(n, depth, 10 * depth + 1) != "vacuous"
            assert jobs.bound_label(n, depth, 10 * depth) == "vacuous"


# -- the random-profile job ---------------------------------------------------------------------------------
def test_each_model_is_drawn_once_and_profiled_under_every_eps():
    config = jobs.RandomProfilesConfig(n=6, init="gaussian", depth=1, width=8, models=3,
                                       eps=[0.0, 1e-5, 1.0], margins=[0.0, 0.1])  # fmt: skip
    out = jobs.profile_random_models(config)
    rows = out["rows"]
    assert len(rows) == 3 * 3 * 2
    for j in range(3):
        mine = [r for r in rows if r["model"] == j]
        assert len({r["seed"] for r in mine}) == 1  # one weight draw per model
        model = build_model(config.model_config(6, "learned"), seed=mine[0]["seed"])
        first = None
        for eps in (0.0, 1e-5, 1.0):
            set_layernorm_eps(model, eps)
            table, _ = logit_table(model, 6)
            labels = (table > 0).int()
            row = next(r for r in mine if r["eps"] == eps and r["margin"] == 0.0)
            assert row["accept"] == int(labels.sum()) and row["reject"] == 64 - row["accept"]
            first = labels if first is None else first
            assert row["changed_vs_first_eps"] == int((labels != first).sum())
    # the analysis gives the three eps rows of a model one unit, which the engine merges
    from learnability.studies.volume.evidence import _rows_of

    record = type("R", (), {"config": dataclasses.asdict(config), "metrics": out})()
    parsed = _rows_of(record, "random", "project")
    assert len({r.unit for r in parsed}) == 3
    frame = Frame([Obs(r.unit, float(r.k0 > 0), None, "model") for r in parsed if r.margin == 0])
    assert len(frame.units()) == 3 and frame.merged == 6


def test_rows_carry_the_same_balance_control_of_their_own_counts():
    config = jobs.RandomProfilesConfig(n=8, init="uniform", depth=1, width=8, models=4, eps=[0.0])
    for r in jobs.profile_random_models(config)["rows"]:
        m = same_balance_moments(8, r["accept"], r["reject"])
        assert r["ctrl_k0_mean"] == pytest.approx(m.mean_k0)
        assert r["ctrl_k0_positive"] == pytest.approx(
            k0_positive_probability(
                8, r["accept"], r["reject"], draws=config.control_draws, seed=8
            ).value
        )
        if r["margin"] == 0:
            assert r["undecided"] == 0 and sum(r["profile"]) == 256
        assert r["constant"] == (r["accept"] in (0, 256) if r["margin"] == 0 else r["constant"])


def test_variants_share_matrices_and_differ_in_layernorm_and_biases():
    common = dict(n=5, init="uniform", depth=1, width=8, models=2, eps=[0.0], margins=[0.0])
    public = jobs.RandomProfilesConfig(**common)
    drawn = jobs.RandomProfilesConfig(**common, ln_init="scheme", bias_init="scheme",
                                      readout_bias_init="scheme")  # fmt: skip
    assert public.seed_of(5, 1) == drawn.seed_of(5, 1) != public.seed_of(6, 1)
    a = build_model(public.model_config(5, "learned"), seed=public.seed_of(5, 0)).state_dict()
    b = build_model(drawn.model_config(5, "learned"), seed=drawn.seed_of(5, 0)).state_dict()
    assert torch.equal(a["layers.0.attn.in_proj.weight"], b["layers.0.attn.in_proj.weight"])
    assert not torch.equal(a["layers.0.ln1.weight"], b["layers.0.ln1.weight"])


def test_length_job_uses_the_same_weights_at_every_n():
    config = jobs.LengthProfilesConfig(ns=[3, 5], init="xavier_normal", depth=1, width=8, models=2,
                                       eps=[0.0, 1.0], directions=1)  # fmt: skip
    rows = jobs.profile_across_lengths(config)["rows"]
    assert len(rows) == 2 * 2 * 2
    for j in (0, 1):
        mine = [r for r in rows if r["model"] == j]
        assert len({r["seed"] for r in mine}) == 1 and len({r["theta_norm"] for r in mine}) == 1
        assert all(r["lipschitz_theta"] > 0 and r["max_flip"] >= 0 for r in mine)


def test_bad_configs_are_user_errors():
    with pytest.raises(UserError, match="init scheme"):
        jobs.RandomProfilesConfig(init="he_normal")
    with pytest.raises(UserError, match="n=40"):
        jobs.RandomProfilesConfig(n=40)
    with pytest.raises(UserError, match="eps"):
        jobs.RandomProfilesConfig(eps=[-1.0])
    with pytest.raises(UserError, match="ns="):
        jobs.LengthProfilesConfig(ns=[0, 4])


def test_random_functions_rate_is_near_one_minus_inverse_e():
    k0 = jobs.random_function_k0(10, 600, seed=3)
    assert abs(float((k0 > 0).mean()) - (1 - math.exp(-1))) < 4 * math.sqrt(0.632 * 0.368 / 600)


def test_plateau_reads_the_test_loss_history():
    flat = [{"test_loss": 1.0 - 0.001 * i} for i in range(8)]
    falling = [{"test_loss": 1.0 - 0.1 * i} for i in range(8)]
    assert plateau(flat) == (True, False)
    assert plateau(falling) == (False, True)


# -- plumbing -----------------------------------------------------------------------------------------------
def test_quick_and_paper_sweeps_expand_with_unique_runs():
    for scale in ("quick", "paper"):
        runs = [r for s in STUDY.sweeps(STUDY.plan(scale)) for r in s.expand()]
        assert len({r.run_id for r in runs}) == len(runs)
        assert {r.job for r in runs} == {"volume.random_profiles", "volume.length_profiles",
                                          "volume.random_functions", "train"}  # fmt: skip
    claims = STUDY.claims(QUICK)
    assert len({c.slug for c in claims}) == len(claims) == 12
    assert all(c.all_alternatives() for c in claims)


def test_quick_plan_cuts_of_issue_36():
    """The quick plan profiles `project` models at eps = 0 only (every rule reads it), keeps eps 0 and 1 in
    the drawn and cited variants, and runs only bound cells that some N of the grid judges."""
    p = QUICK.params
    eps = {
        s.name.split("/", 2)[2]: s.base["eps"]
        for s in STUDY.sweeps(QUICK)
        if s.name.startswith("volume/random/")
    }
    assert all(e == [0.0] for name, e in eps.items() if name.endswith("/project"))
    assert all(e == [0.0, 1.0] for name, e in eps.items() if not name.endswith("/project"))
    for depth, width in p.bound_archs:
        assert any(
            jobs.bound_label(n, depth, width) == "non-trivial"
            and jobs.theorem_bound(n, depth, width) <= 0.01 * 2**n
            for n in p.bound_ns
        )
    # the cut cell: its bound exceeds 1% of 2^N at every quick N
    assert all(jobs.theorem_bound(n, 1, 16) > 0.01 * 2**n for n in p.bound_ns)
    # fewer models per cell keep the first ones: model j's weights do not depend on the count
    few, many = (
        jobs.RandomProfilesConfig(n=6, depth=1, width=8, models=k, seed=p.seed) for k in (2, 3)
    )
    assert [few.seed_of(6, j) for j in range(2)] == [many.seed_of(6, j) for j in range(2)]


TINY = Plan("quick", dataclasses.replace(
    QUICK.params, ns=(3, 4, 5), archs=((1, 8),), models=4, variant_models=2, eps=(0.0, 1.0),
    margins=(0.0, 0.1), bound_ns=(4,), bound_archs=((1, 8), (1, 12)), bound_models=3, length_ns=(3, 4, 5),
    length_arch=(1, 8), length_models=2, length_eps=(0.0, 1e-5), directions=1, control_count=30,
    control_draws=20, trained_ns=(3, 4), trained_seeds=(0,),
    trained_model={"n_layers": 1, "n_heads": 1, "d_model": 8, "d_ff": 8},
    trained_train={"steps": 20, "batch_size": 16, "lr": 1e-2, "weight_decay": 0.0, "eval_every": 5},
))  # fmt: skip


def test_tiny_plan_end_to_end(tmp_path):
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store

    summary = run_sweep(STUDY.sweeps(TINY), tmp_path / "store", workers=0, progress=False)
    assert summary.failed == 0 and summary.crashed == 0
    records = Store(tmp_path / "store").records()
    report = analyse_records(STUDY, records, TINY, tmp_path / "figures")
    assert len(report.claims) == 12
    for c in report.claims:
        row = c.as_json()
        assert row["verdict"] in VERDICTS and row["measured"] and row["scale"] == "quick"
        assert row["rule"]["text"] and row["rule"]["version"] >= 1
        assert row["control"]["name"] and row["units"]["kind"]
        assert row["robustness"] and all(r["verdict"] in VERDICTS for r in row["robustness"])
        assert row["history"][0]["version"] == row["rule"]["version"]
    by_id = {c.id: c for c in report.claims}
    assert len(by_id["volume/skew"].history) == 2  # the pre-engine rule is shown beside the current
    assert {t.title.split(":")[0] for t in report.tables} >= {"Theorem 4.5 at eps = 0"}
    assert any("project's own protocol" in note for note in report.notes)
    assert all(f.png.exists() for f in report.figures)
    # the analysis selections: non-constant rows only, one unit per model across eps
    from learnability.studies.base import StudyResults
    from learnability.studies.volume.evidence import rows

    results = StudyResults(records, TINY, "volume")
    kept = select(rows(results, "random"), eps="all")
    assert kept and not any(r.constant for r in kept)


def test_analysis_with_no_records_is_inconclusive(tmp_path):
    report = analyse_records(STUDY, [], QUICK, tmp_path)
    verdicts = {c.id.split("/")[1]: c.verdict for c in report.claims}
    # the quick plan trains no PARITY (its deviations say why): that claim is "not run", not inconclusive
    assert verdicts.pop("parity-fails") == "not run"
    assert len(verdicts) == 11 and set(verdicts.values()) == {"inconclusive"}


# -- trained claims on synthetic runs -----------------------------------------------------------------------
def _run(function: str, n: int, seed: int, learned_at: int | None, budget: int = 3000):
    """A finished train record: learned at step `learned_at` (loss drops there), else stuck at 1.0."""
    from learnability.sweep.store import RunRecord

    steps = learned_at or budget
    history = [{"step": s, "test_loss": 1.0 if learned_at is None or s < learned_at else 0.0}
               for s in range(100, steps + 1, 100)]  # fmt: skip
    metrics = {"status": "converged" if learned_at else "finished", "steps": steps,
               "function_agreement": 1.0 if learned_at else 0.5, "history": history,
               "model_K0": 0.0, "target_K0": 0.0}  # fmt: skip
    config = {"task": {"function": function, "n": n}, "train": {"steps": budget}, "seed": seed}
    return RunRecord(f"{function}{n}{seed}", f"volume/trained/s{seed}", "train", config, "ok",
                     metrics, None, 1.0)  # fmt: skip


WITH_PARITY = Plan("quick", dataclasses.replace(
    QUICK.params, trained_ns=(6, 10, 14), trained_functions=tuple(TRAINED_FUNCTIONS)))  # fmt: skip


def _trained_claims(tmp_path, parity_at_10: int, parity_at_14: int | None, seeds: int = 5):
    records = []
    for seed in range(seeds):
        for n in (6, 10, 14):
            records.append(_run("majority", n, seed, 200))
            records.append(_run("first", n, seed, 200))
            records.append(_run("sparse_parity:k=3,seed=0", n, seed, 300))
            at = {6: 400, 10: parity_at_10, 14: parity_at_14}[n]
            records.append(_run("parity", n, seed, at))
    report = analyse_records(STUDY, records, WITH_PARITY, tmp_path)
    return {c.id.split("/")[1]: c for c in report.claims}


def test_parity_failure_needs_a_budget_that_separates_learning_from_starting(tmp_path):
    # N = 10 needed 2,800 of 3,000 steps and no N = 14 run left the constant predictor: inconclusive —
    # pipeline; the v2 evidence (plateau only) called it reproduced, and the history shows it
    claims = _trained_claims(tmp_path, parity_at_10=2800, parity_at_14=None)
    parity = claims["parity-fails"]
    assert parity.verdict == "inconclusive" and "failing to start" in parity.measured
    assert {h["version"]: h["verdict"] for h in parity.history} == {
        3: "inconclusive", 2: "reproduced", 1: "reproduced"}  # fmt: skip
    assert not parity.robust
    # with N = 10 learned in 400 steps, 3,000 steps at the constant predictor is a failure to learn
    claims = _trained_claims(tmp_path / "b", parity_at_10=400, parity_at_14=None)
    assert claims["parity-fails"].verdict == "reproduced"
    # 5/5 learn 3-sparse parity: against the claim, at moderate N (where FIRST is learned too),
    # outside the large-N regime the paper states it for: counted apart, still a negative
    sparse = claims["sparse-parity-fails"]
    assert (sparse.verdict, sparse.qualifier, sparse.regime["inside"]) == (
        "not reproduced",
        "outside regime",
        False,
    )
    assert sparse.regime["status"].startswith("checked: FIRST learned at N = 14")
    assert claims["first-learned"].verdict == "reproduced"
    # five seeds are five initialisations (each seed starts from the same weights at every N): 5/5 gives
    # Wilson [0.566, 1], short of 0.75; the v2 reading counted the 15 (seed, N) runs and reproduced
    majority = claims["majority-learned"]
    assert majority.verdict == "inconclusive" and majority.units["count"] == 5
    assert {h["version"]: h["verdict"] for h in majority.history}[2] == "reproduced"
    assert (
        _trained_claims(tmp_path / "d", 400, None, seeds=12)["majority-learned"].verdict
        == "reproduced"
    )
    # PARITY learned at N = 14 by every seed: the claim fails
    claims = _trained_claims(tmp_path / "c", parity_at_10=400, parity_at_14=900)
    assert claims["parity-fails"].verdict == "not reproduced"


def _profile_record(init: str, n: int, rows: list[dict]):
    from learnability.sweep.store import RunRecord

    config = {"n": n, "init": init, "depth": 1, "width": 16}
    metrics = {"rows": rows, "bound_label": jobs.bound_label(n, 1, 16)}
    return RunRecord(f"{init}{n}", "volume/random/L1D16/project", "volume.random_profiles", config,
                     "ok", metrics, None, 1.0)  # fmt: skip


def _row(j: int, n: int, eps: float, accept: int, k0: int, s_mean: float) -> dict:
    m = same_balance_moments(n, accept)
    return {"model": j, "seed": 1000 + j, "eps": eps, "margin": 0.0, "accept": accept,
            "reject": 2**n - accept, "k0": k0, "s_mean": s_mean, "constant": accept in (0, 2**n),
            "meets_bound": True, "ctrl_s_mean": m.mean_s_over_n, "ctrl_k0_mean": m.mean_k0,
            "ctrl_k0_positive": k0_positive_probability(n, accept, draws=50).value,
            "ctrl_meets_bound": 1.0, "changed_vs_first_eps": 0, "max_flip": 1.0, "mean_flip": 0.1,
            "logit_std": 1.0, "min_abs_logit": 0.1, "ln_min_std": 1.0, "ln_max_normaliser": 1.0,
            "ln_degenerate": 0, "profile": [k0] + [0] * n}  # fmt: skip


def test_random_claims_judge_models_against_their_own_balance(tmp_path):
    # 12 near-balanced models at N = 10 with s/N 0.1 (same-balance: ≈ 0.5) and K_0 > 0, each under two
    # eps values (one unit), plus 12 constant models that every claim leaves out
    n, rows = 10, []
    for j in range(12):
        for eps in (0.0, 1e-5):
            rows.append(_row(j, n, eps, 500 + 2 * j, 40, 0.1))
    for j in range(12, 24):
        rows.append(_row(j, n, 0.0, 0, 2**n, 0.0))
    for j in range(24, 36):  # 8 of 1024 accepted: a same-balance function has K_0 > 0 almost surely
        rows.append(_row(j, n, 0.0, 8, 900, 0.01))
    report = analyse_records(STUDY, [_profile_record("uniform", n, rows)], QUICK, tmp_path)
    claims = {c.id.split("/")[1]: c for c in report.claims}
    skew = claims["skew"]
    assert skew.units["count"] == 24 and skew.details["rule"]["paired"] is True
    # every near-balanced model has K_0 > 0 where a same-balance random function has it ≈ 63% of the
    # time: v3 reads only those 12 (the unbalanced ones leave no room) and reproduces; v2 read all 24
    # non-constant models and is diluted by the unbalanced ones' control of ≈ 1
    positive = claims["k0-positive"]
    assert positive.verdict == "reproduced" and positive.units["count"] == 12
    v2 = next(h for h in positive.history if h["version"] == 2)
    assert "(n=24)" in v2["measured"]
    # 0/24 with K_0 = 0, where the near-balanced models' same-balance functions have K_0 = 0 with
    # probability ≈ 0.37: v3 (against the null) reproduces; v2's 0/24 cannot put the Wilson upper bound
    # under 0.05 (inconclusive)
    measure = claims["measure-zero"]
    assert measure.verdict == "reproduced" and measure.details["rule"]["paired"] is True
    assert measure.details["rule"]["difference"]["value"] == pytest.approx(-0.18, abs=0.03)
    assert {h["version"]: h["verdict"] for h in measure.history}[2] == "inconclusive"
    # counting the 12 constant models too (the pre-engine choice) still leaves 24 units < 0.05 bound
    assert claims["measure-zero"].history[-1]["verdict"] in VERDICTS


def test_bound_claim_is_vacuous_without_a_non_trivial_cell(tmp_path):
    from learnability.sweep.store import RunRecord

    n = 10  # L1 D8: bound 10^-1.5 < 1, met by any K_0 ≥ 1
    rows = [_row(j, n, 0.0, 300 + j, 5, 0.2) for j in range(12)]
    config = {"n": n, "init": "uniform", "depth": 1, "width": 8}
    metrics = {"rows": rows, "bound_label": jobs.bound_label(n, 1, 8)}
    record = RunRecord("b", "volume/bound/L1D8", "volume.random_profiles", config, "ok", metrics,
                       None, 1.0)  # fmt: skip
    report = analyse_records(STUDY, [record], QUICK, tmp_path)
    bound = next(c for c in report.claims if c.id == "volume/bound")
    assert bound.verdict == "vacuous" and "0 of 1 (L, D, N) cells judged" in bound.measured


def test_bound_is_judged_only_where_the_bound_is_small_against_2_to_the_n(tmp_path):
    from learnability.sweep.store import RunRecord

    def cell(width: int, k0: int, count: int) -> RunRecord:
        bound = jobs.theorem_bound(10, 1, width)
        rows = [
            {**_row(j, 10, 0.0, 300 + j, k0, 0.2), "meets_bound": k0 >= bound} for j in range(count)
        ]
        config = {"n": 10, "init": "uniform", "depth": 1, "width": width}
        return RunRecord(f"b{width}", f"volume/bound/L1D{width}", "volume.random_profiles", config, "ok",
                         {"rows": rows}, None, 1.0)  # fmt: skip

    # L1 D12 at N = 10: bound 10^0.5 = 3.2 (0.3% of 2^10), met by K_0 = 5; L1 D16: bound 316 (31%), missed
    # their same-balance functions meet it with probability 1 (the rows' ctrl_meets_bound): v4 is vacuous,
    # v3 (the rate alone) read reproduced on the same data
    report = analyse_records(STUDY, [cell(12, 5, 100), cell(16, 5, 100)], QUICK, tmp_path)
    bound = next(c for c in report.claims if c.id == "volume/bound")
    assert bound.verdict == "vacuous" and "met by the null alone" in bound.measured
    assert "1 of 2 (L, D, N) cells judged" in bound.measured and "L1 D12 N10" in bound.measured
    history = {h["version"]: h["verdict"] for h in bound.history}
    assert history[3] == "reproduced"
    # v2 judged every cell with 1 ≤ bound ≤ 2^N: 100/200 meet it, not reproduced
    assert history[2] == "not reproduced"


def test_cited_embeddings_redraw_only_the_embeddings():
    common = dict(n=5, init="xavier_normal", depth=1, width=64, models=1, eps=[0.0], margins=[0.0])
    ours, cited = (
        jobs.RandomProfilesConfig(**common),
        jobs.RandomProfilesConfig(**common, embedding_init="cited"),
    )
    a = ours.build(ours.model_config(5, "learned"), 7, torch.device("cpu")).state_dict()
    b = cited.build(cited.model_config(5, "learned"), 7, torch.device("cpu")).state_dict()
    assert torch.equal(a["layers.0.attn.in_proj.weight"], b["layers.0.attn.in_proj.weight"])
    # the cited code's tokens: N(0, 1) times √D (its forward scales them), positions N(0, 1)
    tokens, positions = b["token_embedding.weight"], b["position_embedding.weight"]
    assert 0.8 * 8 < float(tokens.std()) < 1.2 * 8 and 0.8 < float(positions.std()) < 1.2
    assert float(a["token_embedding.weight"].std()) < 0.5  # Xavier on a (3, 64) table: std ≈ 0.17
    uniform = jobs.RandomProfilesConfig(**{**common, "init": "uniform"}, embedding_init="cited")
    c = uniform.build(uniform.model_config(5, "learned"), 7, torch.device("cpu")).state_dict()
    assert (
        float(c["token_embedding.weight"].abs().max()) <= 10 * 8
        and float(c["position_embedding.weight"].abs().max()) <= 10
    )
    with pytest.raises(UserError, match="embedding_init"):
        jobs.RandomProfilesConfig(embedding_init="normal")


def test_one_bit_change_reads_the_worst_flip_and_offers_the_mean(tmp_path):
    from learnability.sweep.store import RunRecord

    # max|ΔT| ~ N^-0.35 (N·max grows, slope 0.65: inside the band's indifference zone), mean ~ N^-1.6
    rows = []
    for j in range(8):
        for n in (4, 6, 8, 10, 12):
            base = _row(j, n, 1e-5, 2 ** (n - 1), 1, 0.3)
            rows.append({**base, "n": n, "max_flip": (1 + j) * n**-0.35, "mean_flip": (1 + j) * n**-1.6,
                         "lipschitz_theta": 1.0 + 0.01 * j})  # fmt: skip
    config = {"depth": 2, "width": 16, "init": "uniform"}
    record = RunRecord(
        "l", "volume/lengths", "volume.length_profiles", config, "ok", {"rows": rows}, None, 1.0
    )
    report = analyse_records(STUDY, [record], QUICK, tmp_path)
    flip = next(c for c in report.claims if c.id == "volume/one-bit-change")
    assert flip.verdict == "inconclusive" and flip.details["rule"]["slope"][
        "value"
    ] == pytest.approx(0.65)
    mean = next(r for r in flip.robustness if r["alternative"] == "statistic=mean")
    assert mean["effect"] == "changed" and mean["verdict"] == "reproduced"  # slope −0.6 < 0.25
    assert flip.regime["inside"] is False  # N ≤ 12 does not reach the asymptotic regime


# -- issue 34: the rules against the same-balance null, and the per-N tables ---------------------------------
def _bound_cell(meets: list[bool], null: list[float]):
    from learnability.sweep.store import RunRecord

    rows = [{**_row(j, 10, 0.0, 300 + j, 5, 0.2), "meets_bound": m, "ctrl_meets_bound": c}
            for j, (m, c) in enumerate(zip(meets, null))]  # fmt: skip
    config = {"n": 10, "init": "uniform", "depth": 1, "width": 12}  # bound 3.2: judged
    return RunRecord(
        "b12",
        "volume/bound/L1D12",
        "volume.random_profiles",
        config,
        "ok",
        {"rows": rows},
        None,
        1.0,
    )


def _bound(tmp_path, meets: list[bool], null: list[float]):
    report = analyse_records(STUDY, [_bound_cell(meets, null)], QUICK, tmp_path)
    return next(c for c in report.claims if c.id == "volume/bound")


def test_bound_v4_asks_more_than_the_same_balance_null(tmp_path):
    # every model meets the bound, its same-balance function with probability 0.5: reproduced (both parts)
    bound = _bound(tmp_path / "a", [True] * 100, [0.5] * 100)
    assert bound.verdict == "reproduced"
    assert bound.details["rule"]["part2"]["difference"]["value"] == pytest.approx(0.5)
    assert "0.5" in bound.control["value"]
    # every model meets it, the null 0.9 or 1.0 (mean 0.95, not above 0.95: not vacuous): the difference
    # 0.05 [0.04, 0.06] does not clear 0.05, so v4 is inconclusive where v3 (the rate alone) reproduced
    bound = _bound(tmp_path / "b", [True] * 100, [0.9, 1.0] * 50)
    assert bound.verdict == "inconclusive"
    assert {h["version"]: h["verdict"] for h in bound.history}[3] == "reproduced"
    # the null meets it more often than the models (0.94 vs 0.8): not reproduced, both parts
    bound = _bound(tmp_path / "c", [True] * 80 + [False] * 20, [0.94] * 100)
    assert bound.verdict == "not reproduced"
    assert bound.details["rule"]["part2"]["difference"]["hi"] < 0
    # the models meet it exactly as often as their null (0.95 both: 570/600; the null 0.9 or 1.0): the rate
    # alone is inconclusive (v3), the contrast 0.0 [−0.017, 0.017] lies below 0.02: not reproduced
    null = [0.9, 1.0] * 300
    meets = [
        c == 1.0 or j < 540 for j, c in enumerate(null)
    ]  # 270 of the 300 at 0.9, all 300 at 1.0
    assert sum(meets) == 570
    bound = _bound(tmp_path / "e", meets, null)
    assert bound.details["rule"]["part2"]["difference"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert bound.verdict == "not reproduced"
    assert {h["version"]: h["verdict"] for h in bound.history}[3] == "inconclusive"
    # the null alone clears 0.95 (0.97 for every model): vacuous, whatever the models do
    bound = _bound(tmp_path / "d", [True] * 100, [0.97] * 100)
    assert bound.verdict == "vacuous" and "met by the null alone" in bound.measured


def _excess_records(rate_at: dict[int, float], models: int = 40):
    """Near-balanced models at each N (same-balance P(K_0 > 0) ≈ 0.6): a share `rate_at[N]` has K_0 > 0."""
    out = []
    for n, rate in rate_at.items():
        rows = []
        for j in range(models):
            k0 = 3 if j < round(rate * models) else 0
            rows.append({**_row(j, n, 0.0, 2 ** (n - 1) + j % 3, k0, 0.3), "n": n})
        out.append(_profile_record("uniform", n, rows))
    return out


def test_k0_positive_reads_the_largest_n_and_the_trend_reads_every_n(tmp_path):
    # K_0 > 0 in every model at N = 6 and 8 (excess ≈ +0.4), in 60% at N = 10 (excess ≈ 0): the pooled v3
    # reproduces, v4 at N = 10 does not, and the slope of the excess over N (≈ −0.1 per bit) fails the trend
    records = _excess_records({6: 1.0, 8: 1.0, 10: 0.6})
    report = analyse_records(STUDY, records, QUICK, tmp_path / "a")
    claims = {c.id.split("/")[1]: c for c in report.claims}
    positive = claims["k0-positive"]
    assert positive.verdict == "inconclusive" and positive.units["count"] == 40
    assert abs(positive.details["rule"]["difference"]["value"]) < 0.05
    assert {h["version"]: h["verdict"] for h in positive.history}[3] == "reproduced"
    # K_0 = 0 in 16/40 at N = 10, as often as their same-balance functions (≈ 0.4): measure-zero v3 cannot
    # call it rarer than balance (inconclusive at 40 models); v2's rate 0.4 lay above 0.2 (not reproduced)
    measure = claims["measure-zero"]
    assert measure.verdict == "inconclusive"
    assert abs(measure.details["rule"]["difference"]["value"]) < 0.05
    assert {h["version"]: h["verdict"] for h in measure.history}[2] == "not reproduced"
    trend = claims["k0-excess-trend"]
    assert trend.verdict == "not reproduced" and trend.units["count"] == 120
    assert trend.details["rule"]["slope"]["value"] == pytest.approx(-0.1, abs=0.02)
    # an excess that grows with N (≈ 0.23 at N = 6 and 8, 0.4 at N = 10): reproduced
    rising = analyse_records(
        STUDY, _excess_records({6: 0.8, 8: 0.9, 10: 1.0}), QUICK, tmp_path / "b"
    )
    claims = {c.id.split("/")[1]: c for c in rising.claims}
    assert (
        claims["k0-excess-trend"].verdict == "reproduced"
        and claims["k0-positive"].verdict == "reproduced"
    )
    # the per-N table: one 'all' row per N with the known counts and the paired difference
    table = next(t for t in report.tables if t.title.startswith("k0-positive per N"))
    rows = {(r[0], r[1], r[2]): r for r in table.rows}
    assert rows[(10, "all", "all")][3:5] == [40, "24/40"] and rows[(6, "all", "all")][4] == "40/40"
    at10 = [r for r in records[2].metrics["rows"]]
    expected = sum(float(r["k0"] > 0) - r["ctrl_k0_positive"] for r in at10) / 40
    assert rows[(10, "all", "all")][6].value == pytest.approx(expected)
    assert rows[(10, "L1D16", "uniform")][3] == 40


def test_measure_zero_table_counts_dictators_per_n(tmp_path):
    from learnability.studies.base import StudyResults
    from learnability.studies.volume.evidence import dictator, rows
    from learnability.studies.volume.exhibits import measure_zero_table

    records = []
    for n in (6, 8):
        base = [_row(j, n, 0.0, 2 ** (n - 1) + j, 2, 0.3) for j in range(20)]
        # at N = 6 three K_0 = 0 models, two of them dictators (s = 1 on all 2^N strings); none at N = 8
        if n == 6:
            base[0] = {**base[0], "k0": 0, "profile": [0, 64] + [0] * 5}
            base[1] = {**base[1], "k0": 0, "profile": [0, 64] + [0] * 5}
            base[2] = {**base[2], "k0": 0, "profile": [0, 32, 32] + [0] * 4}
        records.append(_profile_record("gaussian", n, [{**r, "n": n} for r in base]))
    random = rows(StudyResults(records, QUICK, "volume"), "random")
    assert sum(dictator(r) for r in random) == 2
    table = measure_zero_table(random)
    assert table is not None
    by = {(r[0], r[1]): r for r in table.rows}
    assert by[(6, "all")][2:5] == [20, "3/20", 2] and by[(8, "all")][2:5] == [20, "0/20", 0]
    null6 = sum(1 - r.ctrl_k0_positive for r in random if r.n == 6) / 20
    assert float(by[(6, "all")][5]) == pytest.approx(null6, abs=5e-4)
    assert by[(6, "all")][6].value == pytest.approx(3 / 20 - null6)
    # the claim reads the largest N (8) and names the dictators among its K_0 = 0 models in its notes
    report = analyse_records(STUDY, records, QUICK, tmp_path)
    claim = next(c for c in report.claims if c.id == "volume/measure-zero")
    assert "0 with K_0 = 0, of which 0 dictators" in claim.measured
    # its depth alternatives read their own depth: all these models have one layer, so depth=2 finds none
    by_alt = {a["alternative"]: a for a in claim.robustness}
    assert by_alt["depth=1"]["effect"] == "no-op"
    assert by_alt["depth=2"]["verdict"] == "inconclusive" and by_alt["depth=2"]["effect"] != "no-op"
    n_all = next(r for r in claim.robustness if r["alternative"] == "n=all")
    assert "(n=40)" in n_all["measured"]
