"""Adaptive replication: `learnability reproduce --budget 60m`.

After the fixed plan has run, the driver adds independent units — fresh seeds on a claim's
`replicate` sweeps (same sweep names, seed values after the plan's) — to the claims still undecided,
in order of expected decisions per CPU-minute (the power analysis of `claims.power`, at the next
look's level), re-judges, and repeats until every claim is decided or the budget (wall time of the
whole command, fixed plan included) is spent.

Verdicts use the sequential design of `claims.sequential` (alpha spending over a doubling grid of
looks): looks sit at n0·2^j units, so a round adds exactly the seeds that reach a claim's next (or a
later) look. Claims without `replicate` sweeps, and rules without an error rate to spend (BestFit),
keep the plan's own units and fixed-sample verdicts.

Kill-safe and resumable through the store: two tables beside the runs,
`adaptive_design(study, scale, alpha, started)` (which study/scale the design governs) and
`adaptive_seeds(study, scale, sweep, seed, claim, round, scheduled)` (every extra seed, written
before its runs start). A restarted `reproduce --budget` runs the scheduled seeds that did not
finish and goes on; `learnability report` includes the added runs and judges them the same way.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from learnability import stats
from learnability.claims import DECIDED, judge
from learnability.claims import power as power_mod
from learnability.claims.sequential import ALPHA, Look, added_at, eligible, level_at
from learnability.errors import UserError
from learnability.studies.base import Plan, Study, StudyResults

_SCHEMA = """
CREATE TABLE IF NOT EXISTS adaptive_design (
    study TEXT NOT NULL, scale TEXT NOT NULL, alpha REAL NOT NULL, started REAL,
    PRIMARY KEY (study, scale)
);
CREATE TABLE IF NOT EXISTS adaptive_seeds (
    study TEXT NOT NULL, scale TEXT NOT NULL, sweep TEXT NOT NULL, seed INTEGER NOT NULL,
    claim TEXT NOT NULL, round INTEGER NOT NULL, scheduled REAL,
    PRIMARY KEY (study, scale, sweep, seed)
);
"""
LOOKAHEAD = 3  # a claim may jump this many looks ahead in one round (skipped looks cost nothing)
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_budget(text: str) -> float:
    """'90s', '60m', '1.5h' → seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh])\s*", str(text))
    if m is None or float(m.group(1)) <= 0:
        raise UserError(
            f"--budget {text!r} is not allowed; give a positive time with a unit: 90s, 60m or 2h"
        )
    return float(m.group(1)) * _UNITS[m.group(2)]


# -- the tables -------------------------------------------------------------------------------------------
def _connect(store: Any, write: bool = False) -> sqlite3.Connection | None:
    path = store.path
    if not write and not path.is_file():
        return None
    conn = sqlite3.connect(path, timeout=getattr(store, "timeout", 60.0), isolation_level=None)
    if write:
        conn.executescript(_SCHEMA)
    return conn


def _query(store: Any, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    conn = _connect(store)
    if conn is None:
        return []
    try:
        return list(conn.execute(sql, args))
    except sqlite3.OperationalError:  # a store from before adaptive replication: no tables
        return []
    finally:
        conn.close()


def design_alpha(store: Any, study: str, scale: str) -> float | None:
    rows = _query(
        store, "SELECT alpha FROM adaptive_design WHERE study=? AND scale=?", (study, scale)
    )
    return float(rows[0][0]) if rows else None


def added_seeds(store: Any, study: str, scale: str) -> dict[str, list[int]]:
    """Extra seeds scheduled per sweep (full name), ascending."""
    out: dict[str, list[int]] = {}
    rows = _query(
        store,
        "SELECT sweep, seed FROM adaptive_seeds WHERE study=? AND scale=? ORDER BY sweep, seed",
        (study, scale),
    )
    for sweep, seed in rows:
        out.setdefault(sweep, []).append(int(seed))
    return out


def _last_round(store: Any, study: str, scale: str) -> int:
    rows = _query(
        store,
        "SELECT COALESCE(MAX(round), 0) FROM adaptive_seeds WHERE study=? AND scale=?",
        (study, scale),
    )
    return int(rows[0][0]) if rows else 0


# -- sweeps and looks -------------------------------------------------------------------------------------
def _short(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def _replicable(sweep: Any) -> bool:
    return bool(sweep.seed_key)


def extra_sweeps(study: Study[Any], plan: Plan[Any], added: dict[str, list[int]]) -> list[Any]:
    """The plan's sweeps re-run on the extra seeds only (same names, so the runs join them)."""
    by_name = {s.name: s for s in study.sweeps(plan)}
    return [
        replace(by_name[name], seeds=list(seeds))
        for name, seeds in added.items()
        if name in by_name and seeds
    ]


def _ids_by_seed(sweeps: Sequence[Any]) -> dict[tuple[str, int | None], set[str]]:
    out: dict[tuple[str, int | None], set[str]] = {}
    for sweep in sweeps:
        for spec in sweep.expand():
            out.setdefault((sweep.name, spec.seed), set()).add(spec.run_id)
    return out


def _plan_ids(study: Study[Any], plan: Plan[Any]) -> set[str]:
    return {spec.run_id for sweep in study.sweeps(plan) for spec in sweep.expand()}


def added_run_ids(store: Any, study: Study[Any], plan: Plan[Any]) -> set[str]:
    """Run ids of the extra seeds scheduled for this study and scale (empty without a design)."""
    added = added_seeds(store, study.name, plan.scale)
    ids: set[str] = set()
    for run_ids in _ids_by_seed(extra_sweeps(study, plan, added)).values():
        ids |= run_ids
    return ids


class StudyDesign:
    """The sequential design of one study and scale: per claim its looks (`claims.sequential.Looks`)."""

    def __init__(
        self,
        study: Study[Any],
        plan: Plan[Any],
        records: list[Any],
        added: dict[str, list[int]],
        alpha: float = ALPHA,
    ) -> None:
        self.study, self.plan, self.records, self.alpha = study, plan, records, alpha
        self.sweeps = {s.name: s for s in study.sweeps(plan)}
        self.added = added
        self.plan_ids = _plan_ids(study, plan)
        self.by_seed = _ids_by_seed(extra_sweeps(study, plan, added))

    def full(self, short: str) -> str:
        return f"{self.study.name}/{short}"

    def replicated(self, claim: Any) -> bool:
        names = [self.full(s) for s in claim.replicate]
        return (
            bool(names)
            and all(n in self.sweeps and _replicable(self.sweeps[n]) for n in names)
            and eligible(claim.rule)
        )

    def n0(self, claim: Any) -> int:
        return min(len(self.sweeps[self.full(s)].seeds) for s in claim.replicate)

    def added_count(self, claim: Any) -> int:
        return min(len(self.added.get(self.full(s), [])) for s in claim.replicate)

    def _results(self, ids: set[str]) -> StudyResults:
        return StudyResults(
            [r for r in self.records if r.run_id in ids], self.plan, self.study.name
        )

    def looks(self, claim: Any) -> list[Look]:
        if not self.replicated(claim):
            return [Look(0, self._results(self.plan_ids), 0)]
        n0, have = self.n0(claim), self.added_count(claim)
        out, j = [], 0
        while added_at(j, n0) <= have:
            a = added_at(j, n0)
            ids = set(self.plan_ids)
            for short in claim.replicate:
                name = self.full(short)
                for seed in self.added.get(name, [])[:a]:
                    ids |= self.by_seed.get((name, seed), set())
            out.append(Look(j, self._results(ids), a))
            j += 1
        return out


def design(
    store: Any, study: Study[Any], plan: Plan[Any], records: list[Any]
) -> StudyDesign | None:
    """The study's sequential design, where `reproduce --budget` started one for this scale."""
    alpha = design_alpha(store, study.name, plan.scale)
    if alpha is None:
        return None
    return StudyDesign(study, plan, records, added_seeds(store, study.name, plan.scale), alpha)


# -- one round --------------------------------------------------------------------------------------------
@dataclass
class Option:
    """Adding seeds to reach look `j` of one claim: what it costs and how likely it decides."""

    study: Study[Any]
    claim: Any
    j: int
    seeds: dict[str, int]  # sweep (full name) -> extra seeds this option needs there
    seconds: float  # run seconds those seeds cost
    power: float

    @property
    def score(self) -> float:
        return self.power / max(self.seconds / 60, 1e-6)


def _seconds_per_seed(records: list[Any], sweep: str) -> float | None:
    per_seed: dict[Any, float] = {}
    for r in records:
        if r.sweep == sweep and r.seconds is not None:
            per_seed[r.seed] = per_seed.get(r.seed, 0.0) + float(r.seconds)
    return sum(per_seed.values()) / len(per_seed) if per_seed else None


def state(d: StudyDesign, claim: Any) -> tuple[str, Look, Any]:
    """The claim's sequential verdict now, its last look, and that look's judgement."""
    jd = None
    for look in d.looks(claim):
        with stats.confidence(level_at(look.j, d.alpha)):
            jd = judge(claim.rule, claim.evidence(look.results, claim.defaults()), claim.units)
        if jd.verdict in DECIDED:
            return jd.verdict, look, jd
    assert jd is not None
    return jd.verdict, look, jd


def options(d: StudyDesign, claim: Any, look: Look, jd: Any) -> tuple[list[Option], str]:
    """Ways to add units to an open claim (empty, with the reason, where none can help)."""
    if jd.frame is None:
        return [], f"no data to plan from ({jd.measured})"
    n0 = d.n0(claim)
    cost: dict[str, float] = {}
    for short in claim.replicate:
        sec = _seconds_per_seed(d.records, d.full(short))
        if sec is None:
            return [], f"no run times recorded for {d.full(short)}"
        cost[d.full(short)] = sec
    out = []
    for j in range(look.j + 1, look.j + 1 + LOOKAHEAD):
        target = added_at(j, n0)
        seeds = {n: max(0, target - len(d.added.get(n, []))) for n in cost}
        seconds = sum(seeds[n] * cost[n] for n in cost)
        with stats.confidence(level_at(j, d.alpha)):
            try:
                c = power_mod.curve(claim.rule, jd.frame, claim.units.min_per_cell, claim.prior_sd)
            except power_mod.NoPower as exc:  # in the zone, no spread, no data
                return [], str(exc) or type(exc).__name__
            units = max(1, c.n0) * (n0 + target) // max(1, n0 + look.units_added)
            p = c(units)
        if seconds > 0:
            out.append(Option(d.study, claim, j, seeds, seconds, p))
    return out, ""


def choose(candidates: list[Option], seconds_left: float, parallel: int) -> list[Option]:
    """Greedy by expected decisions per CPU-minute, each claim once, while the estimated wall time
    (run seconds / parallel workers) fits what is left of the budget."""
    picked: list[Option] = []
    taken: set[tuple[str, str]] = set()
    wanted: dict[str, int] = {}
    spent = 0.0
    for o in sorted(candidates, key=lambda o: -o.score):
        key = (o.study.name, o.claim.slug)
        if key in taken or o.power < 0.05:
            continue
        extra = sum(
            max(0, n - wanted.get(name, 0)) * (o.seconds / max(sum(o.seeds.values()), 1))
            for name, n in o.seeds.items()
        )
        if spent + extra / parallel > seconds_left:
            continue
        picked.append(o)
        taken.add(key)
        spent += extra / parallel
        for name, n in o.seeds.items():
            wanted[name] = max(wanted.get(name, 0), n)
    return picked


def schedule(
    store: Any, picks: list[Option], plans: dict[str, Plan[Any]], round_no: int
) -> dict[tuple[str, str], list[int]]:
    """Write the picked seeds into the table (before anything runs); returns (study, sweep) → seeds.
    New seed values follow the largest the sweep has used (plan or earlier rounds)."""
    need: dict[tuple[str, str], tuple[int, str]] = {}
    for o in picks:
        for name, n in o.seeds.items():
            key = (o.study.name, name)
            if n > need.get(key, (0, ""))[0]:
                need[key] = (n, o.claim.slug)
    studies = {o.study.name: o.study for o in picks}
    conn = _connect(store, write=True)
    assert conn is not None
    new: dict[tuple[str, str], list[int]] = {}
    try:
        conn.execute("BEGIN IMMEDIATE")
        for (study_name, name), (n, slug) in need.items():
            if n <= 0:
                continue
            plan = plans[study_name]
            sweeps = {x.name: x for x in studies[study_name].sweeps(plan)}
            used = [r[0] for r in conn.execute(
                "SELECT seed FROM adaptive_seeds WHERE study=? AND scale=? AND sweep=?",
                (study_name, plan.scale, name),
            )]  # fmt: skip
            start = max([*sweeps[name].seeds, *used]) + 1
            seeds = list(range(start, start + n))
            conn.executemany(
                "INSERT INTO adaptive_seeds(study, scale, sweep, seed, claim, round, scheduled) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(study_name, plan.scale, name, x, slug, round_no, time.time()) for x in seeds],
            )
            new[(study_name, name)] = seeds
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return new


def start_design(store: Any, studies: list[Study[Any]], scale: str, alpha: float = ALPHA) -> None:
    conn = _connect(store, write=True)
    assert conn is not None
    try:
        for s in studies:
            conn.execute(
                "INSERT OR IGNORE INTO adaptive_design(study, scale, alpha, started) VALUES (?, ?, ?, ?)",
                (s.name, scale, alpha, time.time()),
            )
    finally:
        conn.close()


# -- the driver -------------------------------------------------------------------------------------------
def replicate(
    studies: list[Study[Any]],
    store: Any,
    scale: str,
    budget_s: float,
    started: float,
    run: Callable[[list[Any]], Any],
    say: Callable[[str], None] = print,
    parallel: int | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, int]:
    """Add units to undecided claims until all are decided or the budget is spent.

    `run(sweeps)` executes sweeps into the store (the CLI passes `run_sweep` with its options);
    `started` is when the budget began (the command's start). Returns counts for the summary."""
    parallel = max(1, parallel or os.cpu_count() or 1)
    plans = {s.name: s.plan(scale) for s in studies}
    governed = [
        s for s in studies
        if any(c.replicate and eligible(c.rule) for c in s.claims(plans[s.name]))
    ]  # fmt: skip
    totals = {"rounds": 0, "units_added": 0, "open": 0}
    if not governed:
        say("adaptive: no claim declares replicate sweeps; nothing to add")
        return totals
    start_design(store, governed, scale)
    # a restarted run: finish the seeds scheduled before it was stopped (finished runs are skipped)
    pending = [
        x
        for s in governed
        for x in extra_sweeps(s, plans[s.name], added_seeds(store, s.name, scale))
    ]
    if pending:
        say(f"adaptive: resuming {sum(len(x.seeds) for x in pending)} scheduled seeds")
        run(pending)
    round_no = max(_last_round(store, s.name, scale) for s in governed)
    while True:
        left = budget_s - (clock() - started)
        candidates: list[Option] = []
        open_claims, closed = [], 0
        for s in governed:
            plan = plans[s.name]
            added = added_seeds(store, s.name, scale)
            ids = _plan_ids(s, plan) | added_run_ids(store, s, plan)
            d = StudyDesign(s, plan, store.records(study=s.name, run_ids=ids), added)
            for claim in s.claims(plan):
                if not d.replicated(claim):
                    continue
                verdict, look, jd = state(d, claim)
                if verdict in DECIDED:
                    closed += 1
                    continue
                open_claims.append(f"{s.name}/{claim.slug}")
                opts, _why = options(d, claim, look, jd)
                candidates += opts
        totals["open"] = len(open_claims)
        if not open_claims:
            say(
                f"adaptive: every replicable claim is decided ({closed}); {max(left, 0) / 60:.1f} min of the budget left"
            )
            break
        if left <= 0:
            say(f"adaptive: budget spent; {len(open_claims)} claims still open")
            break
        picks = choose(candidates, left, parallel)
        if not picks:
            say(
                f"adaptive: {len(open_claims)} claims still open, none can be helped within the "
                f"{left / 60:.1f} min left"
            )
            break
        round_no += 1
        new = schedule(store, picks, plans, round_no)
        units = sum(len(v) for v in new.values())
        names = ", ".join(
            f"{o.study.name}/{o.claim.slug} → look {o.j} ({o.power:.0%})" for o in picks
        )
        say(
            f"adaptive round {round_no}: +{units} seeds on {len(new)} sweeps for {names}; "
            f"{len(open_claims)} claims open; {left / 60:.1f} min of the budget left"
        )
        by_study: dict[str, dict[str, list[int]]] = {}
        for (study_name, sweep), seeds in new.items():
            by_study.setdefault(study_name, {})[sweep] = seeds
        summary = run(
            [x for s in governed for x in extra_sweeps(s, plans[s.name], by_study.get(s.name, {}))]
        )
        totals["rounds"] += 1
        totals["units_added"] += units
        ran = sum(getattr(summary, k, 0) for k in ("ok", "failed", "diverged"))
        if ran and not getattr(summary, "ok", 0):  # every new run failed: more would fail too
            say(
                f"adaptive: round {round_no} finished no run ok; stopping (see learnability results)"
            )
            break
    return totals


def replicate_and_report(
    studies: list[Study[Any]],
    store: Any,
    scale: str,
    budget_s: float,
    started: float,
    reports: list[Any],
    out: Any,
    run: Callable[[list[Any]], Any],
    say: Callable[[str], None] = print,
    parallel: int | None = None,
) -> list[Any]:
    """`replicate`, then the studies' reports again (their added runs judged by the design)."""
    from learnability.studies.pipeline import analyse_study  # pipeline imports this module

    ok = [s for s, r in zip(studies, reports) if getattr(r, "error", None) is None]
    replicate(ok, store, scale, budget_s, started, run, say, parallel)
    fresh = []
    for s, r in zip(studies, reports):
        if s in ok:
            t0 = time.perf_counter()
            new = analyse_study(s, store, s.plan(scale), out)
            new.seconds = r.seconds + (time.perf_counter() - t0)
            fresh.append(new)
        else:
            fresh.append(r)
    return fresh


__all__ = [
    "Option", "StudyDesign", "added_run_ids", "added_seeds", "choose", "design", "extra_sweeps",
    "options", "parse_budget", "replicate", "replicate_and_report", "schedule", "state",
]  # fmt: skip
