"""Adaptive replication end to end on the probe job: units are added, a resumed run redoes nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from learnability.claims import Choice, Claim, Evidence, Mean, Units, above, no_control, observe
from learnability.errors import UserError
from learnability.studies import adaptive
from learnability.studies.base import Plan, Study
from learnability.studies.pipeline import analyse_study
from learnability.sweep.runner import run_sweep
from learnability.sweep.spec import Sweep
from learnability.sweep.store import Store


def _study(marker_dir: Path) -> Study:
    def sweeps(plan):
        base = {"size": 8, "marker_dir": str(marker_dir)}
        return [Sweep("tiny/main", "testing.probe", base=base, seeds=[0, 1, 2])]

    def evidence(results, choices):
        return Evidence(observe(results.of("main"), "metrics.value", unit="config.seed", group="a"))

    claim = Claim(
        slug="positive", title="the probe value is positive", statement="s", paper_statement="p",
        evidence=evidence, rule=Mean("a", above(0.0, 1.0)), units=Units("seed", 3),
        control=no_control("a synthetic check"), choices=(Choice("c", 1, (2,)),),
        replicate=("main",),
    )  # fmt: skip
    return Study(
        name="tiny", title="tiny", paper="-", protocol_note="-",
        plans={"quick": Plan("quick", None)}, sweeps=sweeps, claims=lambda plan: [claim],
    )  # fmt: skip


def _run(store):
    return lambda sweeps: run_sweep(sweeps, store, workers=0, progress=False)


def test_budget_parsing():
    assert adaptive.parse_budget("90s") == 90 and adaptive.parse_budget("1.5h") == 5400
    assert adaptive.parse_budget("60m") == 3600
    for bad in ("60", "-3m", "soon", "0s"):
        with pytest.raises(UserError, match="--budget"):
            adaptive.parse_budget(bad)


def test_units_are_added_until_decided_and_a_resumed_run_redoes_nothing(tmp_path):
    markers = tmp_path / "markers"
    study = _study(markers)
    plan = study.plan("quick")
    messages: list[str] = []
    with Store(tmp_path / "results") as store:
        run_sweep(study.sweeps(plan), store, workers=0, progress=False)
        before = analyse_study(study, store, plan, tmp_path / "report")
        assert before.claims[0].verdict == "inconclusive" and before.claims[0].adaptive is None
        calls = {"n": 0}

        def killed_in_round_two(sweeps):
            calls["n"] += 1
            if calls["n"] == 2:  # the seeds of round 2 are scheduled, then the driver dies
                raise KeyboardInterrupt
            return _run(store)(sweeps)

        with pytest.raises(KeyboardInterrupt):
            adaptive.replicate([study], store, "quick", 600, time.time(), killed_in_round_two,
                               messages.append, parallel=1)  # fmt: skip
        assert any(m.startswith("adaptive round 1: +3 seeds") for m in messages)
        scheduled = adaptive.added_seeds(store, "tiny", "quick")["tiny/main"]
        assert scheduled[:3] == [3, 4, 5] and len(scheduled) > 3  # round 2's seeds, not yet run
        totals = adaptive.replicate([study], store, "quick", 600, time.time(), _run(store),
                                    messages.append, parallel=1)  # fmt: skip
        assert any(m.startswith("adaptive: resuming") for m in messages)
        after = analyse_study(study, store, plan, tmp_path / "report").claims[0]
    runs = [p.name.split(".")[0] for p in markers.iterdir()]
    assert len(runs) == len(set(runs))  # every run executed once: nothing redone after the kill
    assert len(runs) == 3 + len(adaptive.added_seeds(store, "tiny", "quick")["tiny/main"])
    assert after.verdict == "reproduced" and after.adaptive is not None
    assert after.adaptive["units_added"] >= 3 and after.adaptive["rounds"] >= 1
    assert totals["open"] == 0 and "sequential look" in after.measured


def test_choose_takes_the_most_decisions_per_minute_within_the_budget():
    from types import SimpleNamespace

    def option(slug, j, power, seconds, seeds=3):
        return adaptive.Option(SimpleNamespace(name="s"), SimpleNamespace(slug=slug), j,
                               {f"s/{slug}": seeds}, seconds, power)  # fmt: skip

    cheap, dear, hopeless = (
        option("a", 1, 0.5, 60),
        option("b", 1, 0.9, 600),
        option("c", 1, 0.01, 6),
    )
    later = option("a", 2, 0.6, 180, seeds=9)
    picked = adaptive.choose([dear, later, hopeless, cheap], seconds_left=300, parallel=1)
    assert picked == [cheap]  # 0.5/min beats 0.2 and 0.09/min; b does not fit; c cannot decide
    both = adaptive.choose([dear, cheap], seconds_left=700, parallel=1)
    assert [o.claim.slug for o in both] == ["a", "b"]
    assert adaptive.choose([dear], seconds_left=350, parallel=2) == [dear]  # 600 s on 2 workers
