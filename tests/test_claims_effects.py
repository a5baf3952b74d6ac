"""Alternatives that change nothing, regimes, `not run` and the qualifiers of stopped verdicts."""

from __future__ import annotations

import pytest

from learnability.claims import (
    VERDICTS,
    Alternative,
    Choice,
    Claim,
    Evidence,
    Mean,
    Obs,
    Regime,
    RegimeCheck,
    Units,
    above,
    evaluate,
    no_control,
)
from learnability.studies.base import StudyResults
from learnability.sweep.store import RunRecord


def _obs(values, group="a"):
    return [Obs(i, v, group=group) for i, v in enumerate(values)]


GOOD = [0.9, 1.0, 1.1, 0.95]


def _claim(evidence, **kw) -> Claim:
    kw.setdefault("choices", (Choice("filter", "none", ("strict",)),))
    return Claim(
        slug="demo", title="demo", statement="s", paper_statement="p", evidence=evidence,
        rule=Mean("a", above(0.0, 0.5)), units=Units("seed", 3), control=no_control("test"), **kw,
    )  # fmt: skip


def test_a_lone_no_op_alternative_gives_no_op_and_robust_null():
    # the filter drops nothing: the same rows with the same values reach the rule
    result = evaluate(_claim(lambda r, c: Evidence(_obs(GOOD))), None, "d", "quick")
    assert result.verdict == "reproduced"
    assert [r["effect"] for r in result.robustness] == ["no-op"]
    assert result.robust is None
    assert result.robustness_summary == {
        "effective": 0, "agree": 0, "no_op": 1, "not_evaluated": 0, "underpowered": 0,
        "not_counted": 0,
    }  # fmt: skip


def test_a_change_only_in_a_context_group_the_rule_does_not_read_is_a_no_op():
    # group "b" is drawn beside the judged group "a" (grey context bars) but no verdict reads it
    def evidence(results, choices):
        context = [0.1, 0.2, 0.3] if choices["filter"] == "strict" else [0.4, 0.5, 0.6]
        return Evidence(_obs(GOOD) + _obs(context, group="b"))

    result = evaluate(_claim(evidence), None, "d", "quick")
    assert [r["effect"] for r in result.robustness] == ["no-op"]
    assert result.robust is None


def test_the_same_evidence_under_another_rule_is_a_change():
    alt = Alternative("stricter", rule=Mean("a", above(0.3, 0.7)))
    result = evaluate(
        _claim(lambda r, c: Evidence(_obs(GOOD)), alternatives=(alt,)), None, "d", "q"
    )
    assert [r["effect"] for r in result.robustness] == ["no-op", "changed"]
    assert result.robust is True and result.robustness_summary["agree"] == 1


def test_a_not_evaluated_alternative_is_not_counted_as_agreeing():
    def evidence(results, choices):
        return Evidence(_obs(GOOD[:2] if choices["filter"] == "strict" else GOOD))

    result = evaluate(_claim(evidence), None, "d", "quick")
    (alt,) = result.robustness
    assert alt["effect"] == "not evaluated" and alt["verdict"] == "inconclusive"
    assert result.robust is None
    assert result.robustness_summary == {
        "effective": 0, "agree": 0, "no_op": 0, "not_evaluated": 1, "underpowered": 0,
        "not_counted": 0,
    }  # fmt: skip


def test_a_changed_alternative_that_disagrees_makes_the_verdict_fragile():
    def evidence(results, choices):
        return Evidence(_obs([-0.3, -0.25, -0.35, -0.3] if choices["filter"] == "strict" else GOOD))

    result = evaluate(_claim(evidence), None, "d", "quick")
    assert result.robustness[0]["effect"] == "changed" and result.robust is False

    def noisy(results, choices):  # decides nothing at its 4 units (under 50% power): not counted
        return Evidence(_obs([0.1, 0.9, 0.2, 1.4] if choices["filter"] == "strict" else GOOD))

    result = evaluate(_claim(noisy), None, "d", "quick")
    assert result.robustness[0]["effect"] == "underpowered" and result.robust is None


BAD = [-0.3, -0.25, -0.35, -0.3]  # well below the band: not reproduced


def test_a_verdict_outside_the_regime_is_qualified_in_either_direction():
    regime = Regime("width 1024", "width 512", inside=False, needs="width 1024 (the paper's)")
    negative = evaluate(_claim(lambda r, c: Evidence(_obs(BAD)), regime=regime), None, "d", "q")
    positive = evaluate(_claim(lambda r, c: Evidence(_obs(GOOD)), regime=regime), None, "d", "q")
    for result, verdict, lean in (
        (negative, "not reproduced", "against"),
        (positive, "reproduced", "for"),
    ):
        assert result.verdict == verdict and result.qualifier == "outside regime"
        assert result.label == f"{verdict} — outside regime" == result.as_json()["label"]
        assert f"the evidence goes {lean} the claim" in result.measured
        assert "width 512" in result.measured
        assert "width 1024 (the paper's) would decide it" in result.measured
    assert negative.regime == {
        "claimed": "width 1024", "checked": "width 512", "inside": False,
        "needs": "width 1024 (the paper's)", "falsified_by": "", "status": "declared",
    }  # fmt: skip
    inside = Regime("width 1024", "width 1024", inside=True)
    kept = evaluate(_claim(lambda r, c: Evidence(_obs(BAD)), regime=inside), None, "d", "quick")
    assert (
        kept.verdict == "not reproduced" and kept.qualifier is None and kept.label == kept.verdict
    )
    # an inconclusive verdict outside the regime stays plain inconclusive
    mid = evaluate(
        _claim(lambda r, c: Evidence(_obs([0.2, 0.3, 0.25])), regime=regime), None, "d", "q"
    )
    assert mid.verdict == "inconclusive" and mid.qualifier is None


def test_a_regime_the_plan_data_contradict_is_refused():
    def reached(results):  # the data show the checked cells do lie inside the claimed regime
        return RegimeCheck(True, "FIRST fails at the largest N on 5 of 5 seeds")

    declared_out = Regime("N beyond FIRST", "N = 20", inside=False, needs="larger N", test=reached)
    result = evaluate(_claim(lambda r, c: Evidence(_obs(BAD)), regime=declared_out), None, "d", "q")
    assert result.verdict == "not reproduced" and result.qualifier is None
    assert result.regime["inside"] is True
    assert result.regime["status"].startswith("refused: declared outside")
    agreeing = Regime(
        "N beyond FIRST", "N = 20", inside=False, needs="larger N",
        test=lambda results: RegimeCheck(False, "FIRST learned at every N"),
    )  # fmt: skip
    kept = evaluate(_claim(lambda r, c: Evidence(_obs(BAD)), regime=agreeing), None, "d", "q")
    assert kept.qualifier == "outside regime" and kept.regime["status"].startswith("checked:")


def test_a_regime_outside_must_name_the_step_that_would_decide_it():
    with pytest.raises(ValueError, match="needs"):
        Regime("width 1024", "width 512", inside=False)


def test_not_run_is_its_own_verdict_and_short_circuits_carry_a_qualifier():
    assert "not run" in VERDICTS
    not_run = evaluate(
        _claim(lambda r, c: Evidence(not_run="the quick plan has no width-1024 cell")),
        None,
        "d",
        "q",
    )
    assert not_run.verdict == "not run" and not_run.robust is None and not_run.qualifier is None
    assert not_run.power is not None and not_run.power["current"] is None
    cases = {
        "missing": Evidence(missing="no finished runs"),
        "pipeline": Evidence(pipeline="the trained baseline failed"),
        "units": Evidence(_obs(GOOD[:2])),
    }
    for qualifier, ev in cases.items():
        result = evaluate(_claim(lambda r, c, ev=ev: ev), None, "d", "quick")
        assert result.verdict == "inconclusive" and result.qualifier == qualifier
        assert result.as_json()["qualifier"] == qualifier


def _records(sweep: str, values: list[float]):
    return [
        RunRecord(
            f"{sweep}-{i}", f"demo/{sweep}", "train", {}, "ok", {"y": v}, None, 1.0, "demo", i
        )
        for i, v in enumerate(values)
    ]


def _runs_claim():
    # the alternative reads a second sweep (a second width): other runs, here with equal values
    def evidence(results, choices):
        sweep = "w64" if choices["filter"] == "strict" else "w32"
        return Evidence([Obs(r.seed, r.metrics["y"], group="a") for r in results.of(sweep)])

    return _claim(evidence)


def test_an_alternative_on_other_runs_with_equal_values_is_a_replication_not_a_no_op():
    results = StudyResults(_records("w32", GOOD) + _records("w64", GOOD), "quick", "demo")
    result = evaluate(_runs_claim(), results, "demo", "quick")
    assert [r["effect"] for r in result.robustness] == ["changed"]
    assert result.robust is True
    assert result.robustness_summary == {
        "effective": 1, "agree": 1, "no_op": 0, "not_evaluated": 0, "underpowered": 0,
        "not_counted": 0,
    }  # fmt: skip


def test_reading_the_same_runs_with_equal_values_stays_a_no_op():
    def evidence(results, choices):  # a filter that drops nothing: the same runs, the same rows
        return Evidence([Obs(r.seed, r.metrics["y"], group="a") for r in results.of("w32")])

    results = StudyResults(_records("w32", GOOD), "quick", "demo")
    result = evaluate(_claim(evidence), results, "demo", "quick")
    assert [r["effect"] for r in result.robustness] == ["no-op"] and result.robust is None


def test_reading_tracks_the_runs_handed_out_and_all_records_as_unknown():
    results = StudyResults(_records("w32", [1.0, 2.0]) + _records("w64", [3.0]), "quick", "demo")
    with results.reading() as seen:
        results.of("w32")
    assert seen == {"w32-0", "w32-1"}
    with results.reading() as seen:
        assert len(results.records) == 3
    assert seen == {"*"}
    results.of("w64")  # outside a block nothing is collected (and nothing leaks into the next)
    with results.reading() as seen:
        pass
    assert seen == set()


def test_a_reading_that_is_not_independent_evidence_is_shown_but_never_counted():
    def evidence(results, choices):
        return Evidence(_obs([-0.3, -0.25, -0.35, -0.3] if choices["metric"] == "fresh" else GOOD))

    choice = Choice("metric", "test", ("fresh",), "fresh draws score training items", counts=False)
    result = evaluate(_claim(evidence, choices=(choice,)), None, "d", "quick")
    (alt,) = result.robustness
    assert alt["effect"] == "not counted" and alt["verdict"] == "not reproduced"
    assert result.robust is None and result.robustness_summary["not_counted"] == 1
