"""The claims engine on synthetic records: bands, units, vacuity, robustness, history, the JSON schema."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from learnability.claims import (
    AllOf,
    Alternative,
    BestFit,
    Choice,
    Claim,
    Contrast,
    Control,
    Evidence,
    Frame,
    Mean,
    Obs,
    Rate,
    Revision,
    Trend,
    Units,
    above,
    below,
    evaluate,
    judge,
    no_control,
    observe,
    within,
)
from learnability.report.html import build_report
from learnability.report.study_report import StudyReport
from learnability.stats import Estimate


def _trend_obs(
    slope: float, noise: float = 0.0, seeds: int = 4, group: str = "parity", seed: int = 0
):
    rng = np.random.default_rng(seed)
    return [
        Obs(unit=(group, s, n), y=slope * n + noise * rng.normal(), x=n, group=group)
        for n in (4, 6, 8, 10)
        for s in range(seeds)
    ]


def _claim(evidence, rule, **kw) -> Claim:
    defaults = dict(
        slug="demo",
        title="demo claim",
        statement="y grows with x",
        paper_statement="the paper says y grows",
        evidence=evidence,
        rule=rule,
        units=Units("seed", min_per_cell=3),
        control=no_control("synthetic test"),
        choices=(Choice("noise", "low", ("high",)),),
    )
    defaults.update(kw)
    return Claim(**defaults)


# -- bands -----------------------------------------------------------------------------------------------
def test_band_decides_by_the_whole_interval():
    band = above(0.0, 0.05)
    assert band.judge(Estimate(0.2, 0.1, 0.3, 5)) == "reproduced"
    assert band.judge(Estimate(-0.2, -0.3, -0.1, 5)) == "not reproduced"
    assert band.judge(Estimate(0.2, 0.04, 0.3, 5)) == "inconclusive"  # interval reaches the band
    assert band.judge(Estimate(float("nan"), 0, 0, 0)) == "inconclusive"
    b = below(0.2, 0.3)
    assert b.judge(Estimate(0.1, 0.05, 0.15, 5)) == "reproduced"
    assert b.judge(Estimate(0.5, 0.4, 0.6, 5)) == "not reproduced"
    w = within(-0.25, 0.25, tolerance=0.25)
    assert w.judge(Estimate(0.0, -0.1, 0.1, 5)) == "reproduced"
    assert w.judge(Estimate(0.9, 0.8, 1.0, 5)) == "not reproduced"
    assert w.judge(Estimate(0.3, 0.2, 0.4, 5)) == "inconclusive"


def test_a_point_on_the_line_never_passes_by_rounding():
    # the old polylog rule passed `<= 0.25` at 0.24999999999999994; a band around 0.25 cannot
    edge = Estimate(0.24999999999999994, 0.24999999999999994, 0.24999999999999994, 3)
    assert below(0.2, 0.3).judge(edge) == "inconclusive"


def test_bands_need_width():
    with pytest.raises(ValueError, match="width"):
        above(0.25, 0.25)
    with pytest.raises(ValueError, match="tolerance"):
        within(0.0, 1.0, tolerance=0.0)


def test_band_text_names_its_numbers():
    text = above(0.0, 0.05).text("the slope")
    assert "above 0.05" in text and "below 0" in text and "inconclusive" in text


# -- trend -----------------------------------------------------------------------------------------------
def test_trend_inside_the_tolerance_band_is_inconclusive():
    rule = Trend("parity", above(0.0, 0.05))
    assert (
        judge(rule, Evidence(_trend_obs(0.03, noise=0.001)), Units("seed")).verdict
        == "inconclusive"
    )
    assert judge(rule, Evidence(_trend_obs(0.3, noise=0.01)), Units("seed")).verdict == "reproduced"
    assert (
        judge(rule, Evidence(_trend_obs(-0.3, noise=0.01)), Units("seed")).verdict
        == "not reproduced"
    )


def test_trend_needs_a_control_to_be_flatter():
    obs = _trend_obs(0.3, 0.01) + _trend_obs(0.3, 0.01, group="majority", seed=1)
    # a difference of slopes below 0.05 counts as none; above 0.1 as a real one
    rule = Trend("parity", above(0.0, 0.05), controls=("majority",), control_band=above(0.05, 0.1))
    j = judge(rule, Evidence(obs), Units("seed"))
    assert (
        j.verdict == "not reproduced"
    )  # the control grows just as fast: nothing specific to PARITY
    flat = _trend_obs(0.3, 0.01) + _trend_obs(0.0, 0.01, group="majority", seed=1)
    j = judge(rule, Evidence(flat), Units("seed"))
    assert j.verdict == "reproduced" and "majority slope" in j.decision.control_value


def test_trend_with_repeated_units_uses_one_slope_per_unit():
    # the same 3 models measured at 4 lengths: 3 units, not 12 points
    obs = [Obs(unit=m, y=(1.0 + m) * n, x=n, group="g") for m in range(3) for n in (4, 8, 12, 16)]
    j = judge(Trend("g", above(0.0, 0.1)), Evidence(obs), Units("model"))
    assert j.decision.statistic.n == 3 and j.decision.statistic.value == pytest.approx(2.0)
    assert "per-unit" in j.measured


def test_trend_needs_enough_distinct_x():
    obs = [o for o in _trend_obs(0.3, 0.01) if o.x in (4, 6)]
    j = judge(Trend("parity", above(0.0, 0.05)), Evidence(obs), Units("seed"))
    assert j.verdict == "inconclusive" and "distinct" in j.measured


# -- units -----------------------------------------------------------------------------------------------
def test_pseudo_replicated_cells_are_collapsed_to_their_unit():
    # 3 random models, each profiled under eps in {0, 1e-5, 1}: 9 observations, 3 units
    obs = [Obs(unit=f"model{m}", y=1.0, group="k0_positive") for m in range(3) for _eps in range(3)]
    frame = Frame(obs)
    assert frame.merged == 6 and len(frame.units()) == 3
    j = judge(Rate("k0_positive", above(0.5, 0.6)), Evidence(obs), Units("model", min_per_cell=3))
    assert j.decision.statistic.n == 3


def test_too_few_units_in_a_cell_is_inconclusive_with_the_reason():
    obs = _trend_obs(0.3, 0.01, seeds=2)
    j = judge(Trend("parity", above(0.0, 0.05)), Evidence(obs), Units("seed", min_per_cell=3))
    assert j.verdict == "inconclusive" and "fewer than 3 seeds" in j.measured


# -- short-circuits --------------------------------------------------------------------------------------
def test_a_vacuous_bound_gives_vacuous():
    ev = Evidence(vacuous="the bound N^((D-1)/(2L)-5) is below 1 for every (L, D) on the grid")
    j = judge(Rate("x", above(0.5, 0.6)), ev, Units("model"))
    assert j.verdict == "vacuous" and "below 1" in j.measured


def test_a_failed_baseline_blames_the_pipeline():
    j = judge(
        Rate("x", above(0.5, 0.6)),
        Evidence(pipeline="fully trained baseline 0.41 < 0.95"),
        Units("seed"),
    )
    assert j.verdict == "inconclusive" and j.measured.startswith("inconclusive — pipeline")


# -- contrast, best fit ----------------------------------------------------------------------------------
def test_contrast_pairs_units_measured_both_ways():
    obs = [Obs(u, 0.1 + 0.01 * u, group="model") for u in range(8)]
    obs += [Obs(u, 0.3 + 0.01 * u, group="shuffled") for u in range(8)]
    rule = Contrast("model", "shuffled", below(-0.05, 0.0), what="mean s/N")
    j = judge(rule, Evidence(obs), Units("model"))
    assert j.decision.details["paired"] is True and j.verdict == "reproduced"
    assert j.decision.statistic.value == pytest.approx(-0.2)


def test_contrast_of_rates_between_independent_groups():
    obs = [Obs(("a", u), float(u < 18), group="a") for u in range(20)]
    obs += [Obs(("b", u), float(u < 4), group="b") for u in range(20)]
    j = judge(Contrast("a", "b", above(0.0, 0.1), kind_of="rate"), Evidence(obs), Units("seed"))
    assert j.decision.details["paired"] is False and j.verdict == "reproduced"


def test_contrast_bounds_cut_printed_intervals_and_never_the_verdict():
    # two seeds near the ceiling: the t interval of an accuracy runs past 1 unless it is cut
    obs = [Obs(0, 0.99, group="random"), Obs(1, 0.90, group="random")]
    obs += [Obs(0, 0.50, group="chance"), Obs(1, 0.10, group="chance")]
    free = Contrast("random", "chance", above(0.1, 0.2), what="accuracy")
    cut = Contrast("random", "chance", above(0.1, 0.2), what="accuracy", bounds=(0.0, 1.0))
    a, b = (judge(r, Evidence(obs), Units("seed", min_per_cell=2)) for r in (free, cut))
    assert a.decision.details["focus"]["hi"] > 1.0 and b.decision.details["focus"]["hi"] == 1.0
    assert b.decision.details["control"]["lo"] == 0.0
    assert b.decision.statistic.lo >= -1.0 and b.decision.statistic.hi <= 1.0
    assert a.decision.statistic.value == b.decision.statistic.value and a.verdict == b.verdict


def test_best_fit_picks_the_generating_family_and_refuses_a_tie():
    transforms = {"polylog": lambda d: np.log(np.log(d)), "power": np.log}
    d = 2.0 ** np.arange(6, 21)
    obs = [
        Obs(i, float(np.log(2 + np.log(x) ** 2)), x=float(x), group="m") for i, x in enumerate(d)
    ]
    rule = BestFit("m", "polylog", transforms, margin=4.0)
    assert judge(rule, Evidence(obs), Units("d", min_per_cell=1)).verdict == "reproduced"
    short = [o for o in obs if o.x <= 2.0**8]  # three points cannot separate the families
    assert judge(rule, Evidence(short), Units("d", min_per_cell=1)).verdict == "inconclusive"


def test_all_of_needs_every_part():
    obs = [Obs(u, 1.0, group="softmax") for u in range(5)] + [
        Obs(u, 0.0, group="linear") for u in range(5)
    ]
    rule = AllOf((Rate("softmax", above(0.5, 0.6)), Rate("linear", below(0.3, 0.5))))
    assert (
        judge(rule, Evidence(obs), Units("seed")).verdict == "inconclusive"
    )  # 5 units: wide intervals
    obs += [Obs(u, 1.0, group="softmax") for u in range(5, 40)]
    obs += [Obs(u, 0.0, group="linear") for u in range(5, 40)]
    assert judge(rule, Evidence(obs), Units("seed")).verdict == "reproduced"


# -- a whole claim ---------------------------------------------------------------------------------------
def _records():
    recs = []
    for n in (4, 6, 8, 10):
        for s in range(4):
            y = 0.3 * n + 0.01 * s
            noisy = y + 3 * (-1) ** s  # the same trend buried in noise
            recs.append(
                SimpleNamespace(config={"n": n, "seed": s}, metrics={"y": y, "y_noisy": noisy})
            )
    return recs


def _evidence(records, choices):
    key = "metrics.y" if choices["noise"] == "low" else "metrics.y_noisy"
    obs = observe(
        records, key, unit=lambda r: (r.config["n"], r.config["seed"]), x="config.n", group="parity"
    )
    return Evidence(obs, notes="synthetic")


def test_an_underpowered_alternative_neither_agrees_nor_disagrees():
    # the noisy reading leaves the same trend at 8% power: it cannot disagree with anything
    claim = _claim(_evidence, Trend("parity", above(0.0, 0.1)))
    result = evaluate(claim, _records(), "demo", "quick")
    assert result.verdict == "reproduced"
    (row,) = result.robustness
    assert row["verdict"] == "inconclusive" and row["effect"] == "underpowered"
    assert row["power"]["current"] < 0.5 and row["power"]["units_now"] == 4
    assert result.robust is None and result.robustness_summary["underpowered"] == 1
    assert result.robustness_reason.startswith("untested")


def _flat_records():
    recs = _records()
    for r in recs:  # a second reading that falls with n, measured precisely
        r.metrics["y_flat"] = 2.0 - 0.05 * r.config["n"] + 0.001 * r.config["seed"]
    return recs


def _flat_evidence(records, choices):
    key = "metrics.y" if choices["noise"] == "low" else "metrics.y_flat"
    obs = observe(
        records, key, unit=lambda r: (r.config["n"], r.config["seed"]), x="config.n", group="parity"
    )
    return Evidence(obs)


def test_a_powered_alternative_that_disagrees_makes_the_verdict_fragile():
    claim = _claim(_flat_evidence, Trend("parity", above(0.0, 0.1)))
    result = evaluate(claim, _flat_records(), "demo", "quick")
    assert result.verdict == "reproduced"
    (row,) = result.robustness
    assert row["verdict"] == "not reproduced" and row["effect"] == "changed"
    assert result.robust is False and result.robustness_reason.startswith("fragile: 1 of 1")


def test_an_inconclusive_verdict_is_never_robust():
    claim = _claim(
        _evidence,
        Trend("parity", above(0.0, 0.1)),
        choices=(Choice("noise", "high", ("low",)),),
    )
    result = evaluate(claim, _records(), "demo", "quick")
    assert result.verdict == "inconclusive"
    assert result.robustness[0]["verdict"] == "reproduced"  # a powered alternative decides...
    assert result.robust is None  # ...but there is no verdict for it to hold
    assert result.robustness_reason.startswith("not judged")


def test_a_robust_verdict_and_a_rule_variant():
    claim = _claim(
        _evidence,
        Trend("parity", above(0.0, 0.05)),
        choices=(Choice("noise", "low", ()),),
        alternatives=(Alternative("stricter band", rule=Trend("parity", above(0.1, 0.2))),),
    )
    result = evaluate(claim, _records(), "demo", "quick")
    assert result.verdict == "reproduced" and result.robust is True
    assert [r["alternative"] for r in result.robustness] == ["stricter band"]


def test_a_changed_rule_shows_both_versions():
    old = Trend("parity", above(0.0, 0.05), version=1, date="2026-11-02")
    new = Trend("parity", above(0.5, 0.6), version=2, date="2026-11-30")
    claim = _claim(
        _evidence, new, history=(Revision(old, "2026-11-02", "effect size too small to matter"),)
    )
    result = evaluate(claim, _records(), "demo", "quick")
    versions = [(h["version"], h["verdict"]) for h in result.history]
    assert versions == [(2, "not reproduced"), (1, "reproduced")]
    assert result.history[1]["why"] == "effect size too small to matter"


def test_revisions_must_be_older_and_claims_need_an_alternative():
    rule = Trend("parity", above(0.0, 0.05))
    with pytest.raises(ValueError, match="version"):
        _claim(_evidence, rule, history=(Revision(rule, "2026-11-01", "same version"),))
    with pytest.raises(ValueError, match="alternative"):
        _claim(_evidence, rule, choices=())


def test_claims_json_has_the_documented_schema(tmp_path):
    claim = _claim(
        _flat_evidence,
        Trend("parity", above(0.0, 0.05), version=2),
        control=Control("flat control task", value="MAJORITY slope 0"),
        history=(Revision(Mean("parity", above(0.0, 0.1)), "2026-11-01", "was a mean"),),
    )
    result = evaluate(claim, _flat_records(), "demo", "quick", "quick uses n ≤ 10")
    report = StudyReport("demo", "Demo", "Paper 2024", "own protocol", "quick", [result])
    build_report([report], tmp_path)
    (row,) = json.loads((tmp_path / "claims.json").read_text())
    assert set(row) >= {
        "id", "statement", "paper_statement", "verdict", "rule", "control", "units", "robustness",
        "robust", "history", "scale", "measured", "details",
    }  # fmt: skip
    assert (
        row["id"] == "demo/demo"
        and row["rule"]["version"] == 2
        and set(row["rule"]) == {"id", "version", "text"}
    )
    assert row["control"] == {"name": "flat control task", "value": "MAJORITY slope 0"}
    assert row["units"]["kind"] == "seed" and row["units"]["count"] == 16
    assert [h["version"] for h in row["history"]] == [2, 1]
    page = (tmp_path / "report.html").read_text()
    assert "noise=high" in page and "fragile" in page and "v1" in page
    md = (tmp_path / "claims.md").read_text()
    assert "demo/demo" in md and "1 reproduced (1 fragile)" in md


def test_a_claim_whose_rule_never_ran_still_states_its_control():
    few = _claim(
        _evidence,
        Trend("parity", above(0.0, 0.1)),
        units=Units("seed", min_per_cell=9),
        control=Control("PARITY itself", group="parity"),
    )
    result = evaluate(few, _records(), "demo", "quick")
    assert result.verdict == "inconclusive" and "fewer than 9" in result.measured
    assert (
        result.control["value"].startswith("parity: ") and "did not run" in result.control["value"]
    )
    vac = _claim(
        lambda r, c: Evidence(vacuous="bound below 1"),
        Trend("parity", above(0.0, 0.1), controls=("majority",), control_band=above(0.0, 0.1)),
        control=Control("MAJORITY", group="majority"),
    )
    result = evaluate(vac, _records(), "demo", "quick")
    assert result.verdict == "vacuous" and result.control["value"].startswith("not measured")


# -- pairing inferred from shared units ---------------------------------------------------------------------
def _shared_seed_obs(drop: int = 0):
    """Focus and control trained from the same 8 seeds: each seed carries its own slope offset (±1),
    the focus grows 0.1 per x faster. `drop` control seeds are missing (a filter left them out)."""
    obs = []
    for s in range(8):
        offset = (-1) ** s * (1 + 0.1 * s)
        for x in (4, 6, 8):
            obs.append(Obs(f"s{s}", (offset + 0.1) * x, x=x, group="focus"))
            if s >= drop:
                obs.append(Obs(f"s{s}", offset * x, x=x, group="control"))
    return obs


def test_a_trend_control_is_paired_when_the_groups_share_their_seeds():
    rule = Trend("focus", above(-1.0, -0.5), controls=("control",), control_band=above(0.0, 0.05))
    for drop in (0, 2):  # all seeds shared, or 6 of 8: still paired on the shared ones
        decision = judge(rule, Evidence(_shared_seed_obs(drop)), Units("seed")).decision
        diff = decision.details["controls"]["control"]
        assert diff["paired"] is True and f"paired on {8 - drop} shared units" in decision.measured
        # the seed offsets cancel: every pair differs by exactly 0.1 per x
        assert diff["difference"]["value"] == pytest.approx(0.1)
        assert diff["difference"]["hi"] - diff["difference"]["lo"] < 1e-9
    # independent units (other seeds in the control): Welch, and the offsets swamp the difference
    unpaired = [
        o if o.group == "focus" else replace(o, unit="c" + str(o.unit)) for o in _shared_seed_obs()
    ]
    decision = judge(rule, Evidence(unpaired), Units("seed")).decision
    diff = decision.details["controls"]["control"]
    assert diff["paired"] is False and diff["difference"]["hi"] - diff["difference"]["lo"] > 1.0


def test_a_contrast_pairs_the_shared_units_when_a_few_are_missing():
    obs = [Obs(u, 1.0 + u + 0.2, group="a") for u in range(8)]
    obs += [Obs(u, 1.0 + u, group="b") for u in range(1, 8)]  # unit 0 has no control
    decision = judge(Contrast("a", "b", above(0.0, 0.1)), Evidence(obs), Units("seed")).decision
    assert decision.verdict == "reproduced" and decision.details["paired"] is True
    assert decision.statistic.value == pytest.approx(0.2) and decision.statistic.n == 7


def test_a_control_group_the_rule_does_not_read_is_refused():
    # the card prints the control group's value beside the measured one: a group the rule never reads
    # would print one group's number under another's name (issue 35)
    with pytest.raises(
        ValueError, match="Control\\(group='first'\\) is not a group the rule reads"
    ):
        _claim(_evidence, Trend("parity", above(0.0, 0.1)), control=Control("FIRST", group="first"))
    _claim(  # a control group the rule reads is fine
        _evidence,
        Trend("parity", above(0.0, 0.1), controls=("first",), control_band=above(0.0, 0.1)),
        control=Control("FIRST", group="first"),
    )
