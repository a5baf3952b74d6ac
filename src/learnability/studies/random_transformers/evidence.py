"""Study `random`, evidence: reading run records — which condition a run is, its accuracy under an
analysis choice, its chance line, the sanity gate of the fully trained baseline (shared by claims and
exhibits) — and one evidence function per claim (claims bind the plan's params with `partial`)."""

from __future__ import annotations

import math
from typing import Any

from learnability import stats
from learnability.studies import Choices, Evidence, Obs, StudyResults, common, observe
from learnability.studies.common import mean
from learnability.studies.random_transformers.plan import ABLATIONS, PARTIAL, RandomParams

# fmt: off
PAPER_BITS = 2.88  # bits per parameter of the paper's fully trained model
# a restart generalises when its held-out accuracy reaches this: midway between the two modes of modular addition
# (restarts that only memorise score 0.1-0.3 held out, those that generalise 0.88-1; issue 34)
GENERALISES = 0.5


def est(values: Any) -> stats.Estimate:
    """Mean and 95% t interval of the finite values, cut to [0, 1] when they all lie there (accuracies and
    fractions): the interval a claim card prints for the same quantity, in notes and table cells alike."""
    xs = [v for v in values if v is not None and math.isfinite(v)]
    return stats.mean_ci(xs, (0.0, 1.0) if all(0.0 <= v <= 1.0 for v in xs) else None)


def fmt(values: Any, digits: int = 3) -> str:
    return est(values).fmt(digits)


def metric(record: Any, key: str) -> float | None:
    """A metric of a record when it is a finite number, else None."""
    return common.finite(common.metric(record, key))


def condition(record: Any) -> str:
    """'random' (embedding-only), 'full', 'lstm' or the ablation variant's name."""
    if record.config["model"].get("arch") == "lstm":
        return "lstm"
    freeze = record.config["train"]["freeze"]
    if freeze in ("embeddings", "full"):
        return "random" if freeze == "embeddings" else "full"
    return next((k for k, v in ABLATIONS.items() if sorted(v) == sorted(freeze)), "+".join(freeze))


def width(record: Any) -> int:
    return int(record.config["model"]["d_model"])


def seed(record: Any) -> int:
    return int(record.config["seed"])


def _fresh(choices: Choices) -> str:
    return "fresh_" if choices.get("metric", "test") == "fresh" else ""


def accuracy(record: Any, task: str, choices: Choices) -> float | None:
    """The accuracy the claim reads: test set (held-out strings or pairs) or fresh draws of the training
    distribution (every pair, for modular addition); decimal addition under the published or the full scoring."""
    fresh = _fresh(choices)
    if task == "decimal_add":
        return metric(record, f"{fresh}acc_{choices.get('scoring', 'published')}")
    return metric(record, f"{fresh}acc" if fresh else "test_acc")


def chance(record: Any, task: str, choices: Choices) -> float | None:
    """The chance line of the same rows and scoring: the best input-blind predictor (it reads the position and
    the token it sits on, never the problem), and for needle the higher copy-a-random-value line E[1/m].
    `chance=v2` gives the lines of rule v2: 1/p, copy line, majority answer, 0.1 per digit."""
    fresh = _fresh(choices)
    if choices.get("chance") == "v2":
        v2 = {"mod_add": "chance", "needle": f"{fresh}copy_baseline", "parens": f"{fresh}majority_rate"}
        return 0.1 if task == "decimal_add" else metric(record, v2[task])
    scoring = choices.get("scoring", "published") if task == "decimal_add" else "acc"
    blind = metric(record, f"{fresh}blind_{scoring}")
    copy = metric(record, f"{fresh}copy_baseline") if task == "needle" else None
    return max(blind, copy) if blind is not None and copy is not None else blind


def generalises(record: Any, task: str, choices: Choices) -> float | None:
    """1 when the restart's accuracy (the claim's metric) reaches `GENERALISES`, 0 when it does not."""
    acc = accuracy(record, task, choices)
    return None if acc is None else float(acc >= GENERALISES)


def runs(results: StudyResults, sweep: str, cond: str | None = None, at: int | None = None) -> list[Any]:
    """Finished records of a sweep, optionally of one condition and width."""
    return [r for r in results.of(sweep) if cond in (None, condition(r)) and at in (None, width(r))]


def gate(results: StudyResults, p: RandomParams, task: str, choices: Choices, sweep: str = "full") -> tuple[str | None, str]:
    """(problem, summary) of a baseline (`sweep` "full" or "lstm") on `task`: problem is None when at some width
    its mean accuracy (the claim's metric) reaches the plan's gate; otherwise the reason the pipeline, not the
    random model, is in question (for the LSTM: the reason its number is not evidence)."""
    by_width = common.group_by(runs(results, f"{sweep}-{task}"), width)
    if not by_width:
        return f"no finished {sweep} baseline run", f"no {sweep} baseline"
    accs = {w: [accuracy(r, task, choices) for r in rs] for w, rs in by_width.items()}
    best = max(accs, key=lambda w: mean(accs[w]))
    name = "fully trained baseline" if sweep == "full" else sweep.upper()
    summary = f"{name} (width {best}): {fmt(accs[best])}"
    if not mean(accs[best]) >= p.gate:
        return (f"the {name} reached only {mean(accs[best]):.3f} < {p.gate:g} on {task} (best width {best}, "
                f"{choices.get('metric', 'test')} accuracy), so the pipeline, not the random model, is in question",
                summary)
    return None, summary


def gated(results: StudyResults, p: RandomParams, choices: Choices, solved: bool = False) -> list[str]:
    """Tasks whose baseline passes the gate (and, `solved`, whose widest random models reach 0.9 on average)."""
    return [task for task, t in p.tasks.items() if gate(results, p, task, choices)[0] is None and (not solved or mean(
        accuracy(r, task, choices) for r in runs(results, f"acc-{task}", "random", t.wide)) >= 0.9)]


# -- the algorithmic tasks ---------------------------------------------------------------------------
def solves(p: RandomParams, task: str, results: StudyResults, choices: Choices) -> Evidence:
    t, fresh = p.tasks[task], _fresh(choices)
    wide = runs(results, f"acc-{task}", "random", t.wide)
    if not wide:
        return Evidence(missing=f"no finished random run of width {t.wide} on {task}")
    problem, baseline = gate(results, p, task, choices)
    if problem:
        return Evidence(pipeline=problem)
    obs = observe(wide, lambda r: accuracy(r, task, choices), unit=seed, group="random")
    obs += observe(wide, lambda r: chance(r, task, choices), unit=seed, group="chance")
    if task == "mod_add":  # rule v4: the rate of restarts that generalise
        obs += observe(wide, lambda r: generalises(r, task, choices), unit=seed, group="generalises")
    narrow = runs(results, f"acc-{task}", "random", t.narrow) if t.narrow < t.wide else []
    # the chance line printed is the one the rule reads (its "chance" group), never a second constant
    lines = [o.y for o in obs if o.group == "chance"]
    notes = [baseline, f"chance line the rule reads {fmt(lines)}",
             *[f"random width {t.narrow}: {fmt(accuracy(r, task, choices) for r in narrow)}"] * bool(narrow)]
    if task == "mod_add":
        accs = sorted((seed(r), a) for r in wide if (a := accuracy(r, task, choices)) is not None)
        notes.append(f"held-out accuracy by restart (generalises at ≥ {GENERALISES:g}): "
                     + ", ".join(f"{s}: {a:.3f}" for s, a in accs))
    details: dict[str, Any] = {"rejection_rate": mean(metric(r, "rejection_rate") for r in wide)}
    if task == "needle":
        by_m = common.group_by([(int(m), a) for r in wide for m, a in (r.metrics.get("acc_by_m") or {}).items()],
                               lambda x: x[0])
        details["acc_by_m"] = {str(m): mean(a for _, a in v) for m, v in by_m.items()}
        notes.append(f"copy-a-random-value line {fmt(metric(r, fresh + 'copy_baseline') for r in wide)}; random "
                     "accuracy by pairs m (chance 1/m): " + ", ".join(f"m={m}: {a:.3f}" for m, a in details["acc_by_m"].items()))
    if task == "decimal_add":
        digits = [r.metrics.get("digit_acc") or [] for r in wide]
        details["digit_acc"] = [mean(d[i] for d in digits if i < len(d)) for i in range(max(map(len, digits)))]
        notes.append(f"whole-sum exact match {fmt(metric(r, 'exact_match') for r in wide)}; full scoring "
                     f"{fmt(metric(r, 'acc_full') for r in wide)} (blind {fmt(metric(r, 'blind_full') for r in wide)}); "
                     "per digit and both scorings: the decimal table")
    if task != "mod_add":
        notes.append(f"fresh-draw accuracy {fmt(metric(r, 'fresh_acc') for r in wide)}; training draws redrawn "
                     f"because they fall in the test set: {details['rejection_rate']:.1%}")
    return Evidence(obs, notes="; ".join(notes), details=details)


def width_matters(p: RandomParams, results: StudyResults, choices: Choices) -> Evidence:
    tasks = [t for t in gated(results, p, choices, choices.get("tasks") == "solved") if len(p.tasks[t].random_widths) > 1]
    if not tasks:
        return Evidence(pipeline="no task with a narrow random width has a fully trained baseline that solves it")
    obs, notes = [], []
    for task in tasks:
        for group, w in (("wide", p.tasks[task].wide), ("narrow", p.tasks[task].narrow)):
            these = runs(results, f"acc-{task}", "random", w)
            obs += [Obs(f"{task}:{seed(r)}", y, group=group) for r in these if (y := accuracy(r, task, choices)) is not None]
            notes.append(f"{task} width {w}: {fmt(accuracy(r, task, choices) for r in these)}")
    return Evidence(obs, notes="; ".join(notes), details={"tasks": tasks})


def ablation(p: RandomParams, results: StudyResults, choices: Choices) -> Evidence:
    if not p.ablation_tasks:
        return Evidence(not_run="the ablation runs five variants at width 1024 (paper plan only; see the scale note)")
    partial = {"partial": PARTIAL, "single": PARTIAL[:3]}.get(choices.get("partials", "partial"), tuple(ABLATIONS))
    obs, notes = [], []
    for task in p.ablation_tasks:
        three = {seed(r): accuracy(r, task, choices) for r in runs(results, f"acc-{task}", "random", p.tasks[task].wide)}
        if gate(results, p, task, choices)[0] or not mean(three.values()) >= 0.9:
            continue  # only tasks where training all three solves the task say which ones are needed
        variants: dict[int, dict[str, float]] = {}
        for r in runs(results, f"ablation-{task}"):
            if (acc := accuracy(r, task, choices)) is not None:
                variants.setdefault(seed(r), {})[condition(r)] = acc
        for s, accs in variants.items():
            best = max((accs[v] for v in partial if v in accs), default=None)
            if best is not None and (all3 := three.get(s)) is not None:
                obs += [Obs(f"{task}:{s}", all3, group="all three"), Obs(f"{task}:{s}", best, group="best partial")]
        notes.append(f"{task}: " + ", ".join(f"{v} {mean(a.get(v) for a in variants.values()):.3f}" for v in ABLATIONS)
                     + f", all three {mean(three.values()):.3f}")
    if not obs:
        return Evidence(missing="no ablated task where all three matrices reach 0.9 beside a working baseline")
    return Evidence(obs, notes="; ".join(notes))


def subspace(p: RandomParams, results: StudyResults, choices: Choices) -> Evidence:
    k = int(choices.get("k", 10))
    tasks = gated(results, p, choices, choices.get("tasks", "solved") == "solved")
    if not tasks:
        return Evidence(missing="no task solved by the widest random models beside a working baseline")
    pooled = choices.get("view", "per task") == "pooled"  # rules v1-v3 pooled the tasks' (task, seed) units
    ratios: dict[str, list[float]] = {g: [] for g in ("trained", "init", "null")}
    obs, rows_seen = [], set()
    by_task: dict[str, dict[str, list[float]]] = {}
    for task in tasks:
        for r in runs(results, f"acc-{task}", "random", p.tasks[task].wide):
            layers = [e for e in r.metrics.get("subspace") or [] if e["layer"] >= 1]
            layers = layers[-1:] if choices.get("layers", "all") == "last" else layers
            if not layers:
                continue
            i = min(range(len(layers[0]["k"])), key=lambda j: abs(layers[0]["k"][j] - k))
            unit = f"{task}:{seed(r)}" if pooled else str(seed(r))
            for g, pre in (("trained", ""), ("init", "init_"), ("null", "null_")):
                pca = mean(e[f"{pre}pca"][i] for e in layers)
                obs.append(Obs(unit, pca, group=g if pooled else f"{g} {task}"))
                by_task.setdefault(task, {}).setdefault(g, []).append(pca)
                ratios[g].append(pca / mean(e[f"{pre}neurons"][i] for e in layers))
            if choices.get("ratio"):  # rules v1 and v2 judged the PC/neuron ratio against the null's
                obs += [Obs(unit, ratios[g][-1], group=f"{g} ratio") for g in ("trained", "null")]
            rows_seen.add(layers[0]["rows"])
    if not obs:
        return Evidence(missing="no subspace probe in the solved tasks' runs")
    per_task = "; ".join(f"{t}: trained {fmt(v['trained'])}, at init {fmt(v['init'])}, isotropic null "
                         f"{fmt(v['null'])}" for t, v in by_task.items())
    return Evidence(obs, notes=f"tasks {', '.join(tasks)}; top-{k} PC variance fraction per task (same probe rows "
                    f"for the trained and the untrained network): {per_task}; layers ≥ 1 (layer 0, the embedding output, "
                    f"excluded); {', '.join(map(str, sorted(rows_seen)))} rows per probe; PC/neuron variance ratio "
                    "(reported, not judged: the untrained network has it too) trained "
                    + ", at init ".join(fmt(ratios[g], 2) for g in ("trained", "init")) + f", isotropic null {fmt(ratios['null'], 2)}")


# -- memorisation, language, circuits ---------------------------------------------------------------
MEMORY_BITS = {"fano": "bits_per_param_fano", "published": "bits_per_param_raw", "chance-corrected": "bits_per_param"}
LN2 = math.log(2)


def loss_bits(record: Any) -> float | None:
    """A lower bound on the bits a model stores about its table, from its cross-entropy on every item (the run's
    `test_loss`: the mean over the whole table, in nats): the table's values are uniform on M values, so H = N·log2 M,
    and the model's predictive distribution codes them in N·CE/ln 2 bits, so I ≥ N·(log2 M − CE/ln 2) (rule v4;
    clipped at 0). Unlike Fano on the hit rate, it credits confidence in the right value even when it is not the
    argmax, and never gives near chance the slack of h(e)."""
    loss, items = metric(record, "test_loss"), metric(record, "items")
    n_values = record.config["task"].get("n_values")
    if loss is None or not items or not n_values:
        return None
    return max(items * (math.log2(n_values) - loss / LN2), 0.0)


def loss_bits_per_param(record: Any) -> float | None:
    bits, n = loss_bits(record), metric(record, "n_trainable")
    return bits / n if bits is not None and n else None


def memory_bits(record: Any, choices: Choices) -> float | None:
    """Bits per trainable parameter under the `bits` choice (rule v4: the loss bound)."""
    how = choices.get("bits", "loss")
    return loss_bits_per_param(record) if how == "loss" else metric(record, MEMORY_BITS[how])


def memorisation(results: StudyResults, choices: Choices) -> Evidence:
    full, rnd = (runs(results, "memorise", c) for c in ("full", "random"))
    if not full or not rnd:
        return Evidence(missing="no finished memorisation runs of both conditions")
    cap = mean(metric(r, "cap_bits_per_param") for r in full)
    if not cap > PAPER_BITS:
        return Evidence(pipeline=f"the table is too small: a perfect fully trained model could store at most "
                        f"{cap:.2f} bits per trainable parameter, not more than the paper's {PAPER_BITS}")
    # a lower bound of 0 bits has no ratio: such a run is left out (and its cell may fall short of units)
    obs = observe(full + rnd, lambda r: v if (v := memory_bits(r, choices)) else None, unit=seed, group=condition)
    frac = mean(loss_bits_per_param(r) for r in full) / cap

    def both(k: str, digits: int = 3) -> str:
        return f"random {fmt((metric(r, k) for r in rnd), digits)}, fully trained {fmt((metric(r, k) for r in full), digits)}"

    def loss(rs: list[Any]) -> str:
        return fmt(loss_bits_per_param(r) for r in rs)

    notes = (f"bits per trainable parameter, cross-entropy lower bound (rule v4): random {loss(rnd)}, fully trained "
             f"{loss(full)} ({frac:.1%} of the {cap:.2f} bits per parameter a perfect fully trained model could store); "
             f"Fano lower bound (rule v3): {both('bits_per_param_fano')}; hits × log2 M "
             f"(published): {both('bits_per_param_raw')}; hits above chance × log2 M (rule v2): {both('bits_per_param')}; "
             f"hits: {both('hits', 4)} of {mean(metric(r, 'items') for r in rnd):.0f}; predictors that store (almost) "
             f"nothing: input-blind {mean(metric(r, 'blind_hits') for r in rnd):.0f} hits, per key (≤ "
             f"{mean(metric(r, 'per_key_max_bits') for r in rnd):.0f} bits) {fmt((metric(r, 'per_key_hits') for r in rnd), 4)} "
             f"hits = {fmt((metric(r, 'per_key_fano_bits') for r in rnd), 4)} Fano bits; Fano bits {both('bits_fano', 4)}; "
             f"the most a perfect fully trained model could store: {cap:.2f} bits per parameter")
    return Evidence(obs, notes=notes, details={"cap_bits_per_param": cap, "capacity_fraction_full": frac})


def language(p: RandomParams, results: StudyResults, choices: Choices) -> Evidence:
    if p.language is None:
        return Evidence(not_run="language modelling is not run at this scale (see the scale note)")
    rnd, full = runs(results, "lm-random"), runs(results, "lm-full")
    if not rnd or not full:
        return Evidence(missing="no finished language-modelling runs of both conditions")
    budget = mean(metric(r, "n_trainable") for r in rnd)
    ratio = float(str(choices.get("matched", "4x")).rstrip("x"))
    # the widest fully trained width with at most budget / ratio trainable parameters
    w = max((width(r) for r in full if (metric(r, "n_trainable") or math.inf) * ratio <= budget), default=None)
    if w is None:
        return Evidence(missing=f"no fully trained width has {ratio:g}× fewer trainable parameters than the random model")
    obs = observe(rnd, lambda r: metric(r, "test_loss"), unit=seed, group="random")
    obs += observe(rnd, lambda r: metric(r, "unigram_ce"), unit=seed, group="unigram")
    obs += observe([r for r in full if width(r) == w], lambda r: metric(r, "test_loss"), unit=seed, group="full")
    listing = "; ".join(f"full width {fw} ({mean(metric(r, 'n_trainable') for r in rs):,.0f} params): "
                        f"{fmt(metric(r, 'test_loss') for r in rs)}" for fw, rs in common.group_by(full, width).items())
    notes = (f"random width {width(rnd[0])} ({budget:,.0f} trainable params): validation CE "
             f"{fmt(metric(r, 'test_loss') for r in rnd)} (training windows {fmt(metric(r, 'train_ce') for r in rnd)}); "
             f"{listing}; matched width {w}; epochs {mean(metric(r, 'epochs') for r in rnd):.2f}")
    return Evidence(obs, notes=notes, details={"matched_width": w, "random_params": budget})


def relative_kl(record: Any) -> float | None:
    """KL / KL of the best input-independent guess (1 = learned nothing)."""
    kl, base = metric(record, "test_loss"), metric(record, "baseline_kl")
    return kl / base if kl is not None and base else None


def circuit(results: StudyResults, choices: Choices) -> Evidence:
    recs = runs(results, "circuit")
    if not recs:
        return Evidence(missing="no finished circuit-imitation runs")
    kl = relative_kl if choices.get("kl", "relative") == "relative" else (lambda r: metric(r, "test_loss"))
    widths = sorted({int(r.config["task"]["target_width"]) for r in recs})
    target = {r.run_id: int(r.config["task"]["target_width"]) for r in recs}
    if choices.get("view", "trend") == "endpoints":  # the pre-engine rule's view: narrowest and widest targets only
        ends = {widths[0]: "narrowest", widths[-1]: "widest"}
        obs = [Obs(seed(r), y, group=f"{condition(r)} {ends[target[r.run_id]]}") for r in recs
               if target[r.run_id] in ends and (y := kl(r)) is not None]
    else:
        obs = [Obs(seed(r), y, x=math.log2(target[r.run_id]), group=condition(r)) for r in recs if (y := kl(r)) is not None]
    notes = "; ".join(f"{cond} student, relative KL by target width: " + ", ".join(
        f"{w}: {fmt(relative_kl(r) for r in recs if condition(r) == cond and target[r.run_id] == w)}" for w in widths)
        for cond in ("random", "full"))
    return Evidence(obs, notes=notes)
# fmt: on
