"""Claims about the mechanism's consequences the paper discusses in §6: length generalisation (the
project's own extension; `learnability.measure.length`) and the autoregressive scratchpad
(`learnability.tasks.scratchpad`, decoded by `learnability.measure.scratchpad`)."""

from __future__ import annotations

import math
import statistics
from typing import Any

from learnability.claims import (
    AllOf,
    Choice,
    Choices,
    Claim,
    Contrast,
    Control,
    Evidence,
    Mean,
    Obs,
    Revision,
    Units,
    above,
    below,
)
from learnability.measure.length import REFERENCE
from learnability.studies.base import Plan
from learnability.studies.sensitivity.history import PRE, units_revision
from learnability.studies.sensitivity.plan import SensitivityParams
from learnability.studies.sensitivity.records import LABELS, num, task_of

FIT = "fit the training lengths"  # PARITY runs with ≥ 0.95 on the training lengths


# -- length generalisation ------------------------------------------------------------------------------
def _length(results: Any, choices: Choices) -> Evidence:
    runs = [r for r in results.of("length")
            if r.config["model"]["positions"] == choices.get("positions", "none")]  # fmt: skip
    if not runs:
        return Evidence(
            missing=f"no finished length runs with positions={choices.get('positions', 'none')}"
        )
    obs: list[Obs] = []
    ins: dict[str, list[float]] = {"parity": [], "majority": []}
    for r in runs:
        acc = r.metrics.get("length_acc") or {}
        buckets = sorted(acc, key=lambda b: int(b.split("-")[0]))
        inside, beyond = num(acc[buckets[0]]), statistics.fmean(num(acc[b]) for b in buckets[1:])
        task = task_of(r)
        ins.setdefault(task, []).append(inside)
        if task == "parity" and choices.get("parity_runs", FIT) == FIT and inside < 0.95:
            continue
        unit = f"seed{r.config['seed']}"
        obs += [Obs(unit, beyond, None, task), Obs(unit, inside - beyond, None, f"{task}-drop")]
    majority_in = statistics.fmean(ins["majority"]) if ins["majority"] else math.nan
    if majority_in < 0.95:
        return Evidence(pipeline=f"MAJORITY reaches only {majority_in:.2f} on its training lengths")
    if choices.get("parity_runs", FIT) == FIT and not any(o.group == "parity" for o in obs):
        return Evidence(missing=(
            f"no PARITY run fits its training lengths (accuracy there {statistics.fmean(ins['parity']):.2f} "
            "on average, threshold 0.95): there is nothing to generalise beyond them"))  # fmt: skip
    r0 = runs[0]
    ref = "; ".join(
        f"{LABELS[t]} {' / '.join(f'{a:g}' for a in REFERENCE.accuracy[t])}"
        for t in ("parity", "majority")
    )
    notes = (f"accuracy on the training lengths: PARITY {statistics.fmean(ins['parity']):.3f}, MAJORITY "
             f"{majority_in:.3f}; {r0.metrics.get('training_space')} strings of the training lengths, "
             f"~{num(r0.metrics.get('training_distinct')):.0f} distinct ones drawn per run. For orientation "
             f"only, {REFERENCE.source}, buckets {' / '.join(REFERENCE.buckets)}: {ref}")  # fmt: skip
    return Evidence(obs, notes=notes)


# -- scratchpad -------------------------------------------------------------------------------------------
def _scratchpad(results: Any, choices: Choices) -> Evidence:
    runs = results.of("scratchpad")
    if not runs:
        return Evidence(missing="no finished scratchpad runs")
    largest = max(int(r.config["n"]) for r in runs)
    key = (
        "teacher_forced_final_acc"
        if choices.get("decoding") == "teacher-forced"
        else "final_bit_acc"
    )
    obs = []
    for r in runs:
        n = int(r.config["n"])
        if choices.get("n") == "largest" and n != largest:
            continue
        mode = r.config["mode"]
        group = "scratchpad" if mode == "autoregressive" else "plain"
        value = r.metrics.get(key if mode == "autoregressive" else "final_bit_acc")
        # one unit per seed and mode: its runs at several n share the initial weights (merged here);
        # the first engine rule counted each (n, seed) run as a unit
        if choices.get("units") == "run":
            obs.append(Obs(f"{mode}:seed{r.config['seed']}", num(value), n, group))
        else:
            obs.append(Obs(f"{mode}:seed{r.config['seed']}", num(value), None, group))
    return Evidence(obs, notes=f"decoding: {choices.get('decoding', 'autoregressive')}; n = "
                    f"{sorted({int(r.config['n']) for r in runs})}")  # fmt: skip


def _length_rule(version: int, date: str) -> AllOf:
    beyond = "accuracy beyond the training lengths"
    return AllOf(
        (
            Mean("majority", above(0.8, 0.9), what=beyond, labels=LABELS, bounds=(0.0, 1.0)),
            Contrast(
                "parity",
                "majority",
                below(-0.15, -0.05),
                what=beyond,
                labels=LABELS,
                bounds=(0.0, 1.0),
            ),
        ),
        version=version,
        date=date,
    )


def _pad_rule(version: int, date: str = "2026-11-30") -> AllOf:
    return AllOf(
        (
            Mean(
                "scratchpad",
                above(0.8, 0.9),
                what="PARITY-bit accuracy (own outputs fed back)",
                bounds=(0.0, 1.0),
            ),
            Contrast(
                "scratchpad",
                "plain",
                above(0.1, 0.2),
                what="PARITY-bit accuracy",
                bounds=(0.0, 1.0),
            ),
        ),
        version=version,
        date=date,
    )


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    p = plan.params
    positions = tuple(p.len_positions[1:])
    return [
        Claim(
            slug="length-generalisation",
            title="PARITY does not generalise in length; MAJORITY does",
            statement=f"Trained on lengths {p.len_train[0]}–{p.len_train[1]} with a {p.len_readout.upper()} "
            f"read-out and no positional encoding, MAJORITY keeps its accuracy on longer strings, and "
            "PARITY models that fit the training lengths fall below MAJORITY there. The project's own "
            "extension.",
            paper_statement="Hahn & Rofin (§6) argue that sensitive functions are hard to length-generalise; "
            "the paper has no length experiment.",
            evidence=_length,
            rule=_length_rule(3, "2026-11-30"),
            units=Units(
                "seed", 3, "PARITY and MAJORITY runs of a seed share their initial weights"
            ),
            control=Control(
                "MAJORITY (low sensitivity), same read-out, positions and budget", group="majority"
            ),
            choices=(
                Choice(
                    "positions", p.len_positions[0], positions, "encodings defined at every length"
                ),
                Choice(
                    "parity_runs",
                    FIT,
                    ("all",),
                    "also PARITY runs that never fit the training lengths",
                ),
            ),
            history=(
                Revision(
                    AllOf(
                        (
                            Mean("parity-drop", above(0.1, 0.15)),
                            Mean("majority-drop", below(0.1, 0.15)),
                            Contrast("majority", "parity", above(0.05, 0.1)),
                        ),
                        version=1,
                        date=PRE,
                    ),
                    PRE,
                    "pre-engine rule (stop 9), on sinusoidal positions (it read the last position): "
                    "PARITY drops ≥ 0.15, MAJORITY ≤ 0.1, MAJORITY beats PARITY by ≥ 0.1",
                    {"positions": "sinusoidal", "parity_runs": "all"},
                ),
                Revision(
                    _length_rule(2, "2026-11-30"),
                    "2026-11-30",
                    "first engine rule, revised after the first quick run: it also counted PARITY runs that "
                    "never fit their training lengths (all were at chance there, 0.50), for which chance "
                    "beyond them says nothing about length generalisation",
                    {"parity_runs": "all"},
                ),
            ),
        ),
        Claim(
            slug="scratchpad",
            title="An autoregressive scratchpad makes PARITY learnable",
            statement=f"At n = {', '.join(map(str, p.pad_ns))} and the same budget, a causal transformer that writes "
            "the prefix parities one at a time, fed its own outputs at test time, gets the PARITY bit right "
            "where the same-size model trained on PARITY directly does not.",
            paper_statement="Intermediate steps (a scratchpad of prefix parities) make each step a "
            "low-sensitivity function, so PARITY becomes learnable (§6; published code up to n = 1024).",
            evidence=_scratchpad,
            rule=_pad_rule(3),
            units=Units(
                "seed", 3, "a seed's runs at every n share its initial weights: averaged over n"
            ),
            control=Control("plain PARITY: same width, budget and test strings", group="plain"),
            choices=(
                Choice(
                    "decoding",
                    "autoregressive",
                    ("teacher-forced",),
                    "the last step given the true prefix (dense supervision only)",
                ),
                Choice("n", "all", ("largest",)),
            ),
            history=(
                units_revision(_pad_rule(2), "the runs of a seed at its several n"),
                Revision(
                    AllOf(
                        (
                            Mean("scratchpad", above(0.85, 0.9), bounds=(0.0, 1.0)),
                            Mean("plain", below(0.75, 0.8), bounds=(0.0, 1.0)),
                        ),
                        version=1,
                        date=PRE,
                    ),
                    PRE,
                    "pre-engine rule (stop 9): scratchpad ≥ 0.9 and plain ≤ 0.75 at one n; it read the "
                    "last position under teacher forcing",
                    {"decoding": "teacher-forced", "n": "largest"},
                ),
            ),
        ),
    ]


__all__ = ["claims"]
