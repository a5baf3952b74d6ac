"""Words against fields (`learnability.report.consistency`): no claim card of a quick store says what its
fields do not, and each kind of contradiction is caught."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from learnability.claims import (
    Choice,
    Claim,
    Evidence,
    Mean,
    Obs,
    Regime,
    Units,
    above,
    evaluate,
    no_control,
)
from learnability.report.consistency import card_problems

QUICK = Path(__file__).parent / "data" / "quick_claims.json"


def test_every_claim_of_a_quick_store_says_only_what_its_fields_say():
    # claims.json of a full quick reproduce (regenerate with the README's first command and copy
    # results/report/claims.json here when the engine's words change)
    rows = json.loads(QUICK.read_text())
    assert len(rows) >= 39
    problems = {row["id"]: card_problems(row) for row in rows}
    assert {k: v for k, v in problems.items() if v} == {}


def _row(values, regime=None, alternative=(0.9, 1.0, 1.1)):
    def evidence(results, choices):
        return Evidence(
            [Obs(i, v, group="a") for i, v in enumerate(alternative if choices["x"] else values)]
        )

    claim = Claim(
        slug="c", title="t", statement="s", paper_statement="p", evidence=evidence,
        rule=Mean("a", above(0.0, 0.5)), units=Units("seed", 3), control=no_control("test"),
        choices=(Choice("x", 0, (1,)),), regime=regime,
    )  # fmt: skip
    return evaluate(claim, None, "d", "q").as_json()


def test_engine_rows_are_consistent_in_every_state():
    outside = Regime("w 1024", "w 32", inside=False, needs="w 1024")
    cases = [
        _row([0.9, 1.0, 1.1, 0.95]),  # reproduced, a changed agreeing alternative
        _row([-0.3, -0.2, -0.4]),  # not reproduced, the alternative disagrees: fragile
        _row([-0.3, -0.2, -0.4], outside),  # not reproduced — outside regime
        _row([0.9, 1.0, 1.1], outside),  # reproduced — outside regime
        _row([0.1, 0.9, -0.5]),  # inconclusive: never robust
        _row([0.9, 1.0, 1.1], alternative=(0.1, 0.9, -0.5)),  # an underpowered alternative
    ]
    labels = [c["label"] for c in cases]
    assert labels == [
        "reproduced", "not reproduced", "not reproduced — outside regime",
        "reproduced — outside regime", "inconclusive", "reproduced",
    ]  # fmt: skip
    assert cases[5]["robustness"][0]["effect"] == "underpowered" and cases[5]["robust"] is None
    for row in cases:
        assert card_problems(json.loads(json.dumps(row, default=str))) == []


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (lambda r: r.update(robust=True), "robust=True"),
        (lambda r: r.update(label="reproduced"), "label"),
        (
            lambda r: r.update(robustness_reason="untested: no alternative changed the evidence"),
            "sentence",
        ),
        (lambda r: r["robustness"][0].update(effect="no-op"), "robustness_summary"),
        (lambda r: r.update(qualifier=None, label="not reproduced"), "not qualified"),
        (lambda r: r["power"].update(units_now=99), "power"),
        (lambda r: r["history"][0].update(verdict="reproduced"), "history"),
    ],
)
def test_each_kind_of_contradiction_is_caught(edit, complaint):
    row = _row([-0.3, -0.2, -0.4], Regime("w 1024", "w 32", inside=False, needs="w 1024"))
    assert card_problems(row) == []
    bad = copy.deepcopy(row)
    edit(bad)
    assert any(complaint in p for p in card_problems(bad))
