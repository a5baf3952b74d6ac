"""Study `random`, claims: each task solved at the widest width (beside a working fully trained baseline, against
the best input-blind predictor), width matters, the ablation, subspaces, memorisation (Fano bits), language and
circuit imitation — each with its regime (claimed vs checked) and the sweeps whose seeds are its units."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from learnability.studies import (  # isort: skip
    PRE_ENGINE, AllOf, Alternative, Band, Choice, Claim, Contrast, Control, Mean, Plan, Rate, Regime, Revision, Trend,
    Units, above, below, pre_engine)  # fmt: skip
from learnability.studies.random_transformers import evidence as ev

from learnability.studies.random_transformers.plan import LABELS, PAPER_PARAMS, RandomParams, paper_gpu_hours, task_size  # isort: skip  # fmt: skip

# fmt: off
SLUGS = {"mod_add": "solves-mod-add", "needle": "solves-needle", "decimal_add": "solves-decimal", "parens": "solves-parens"}
SEEDS = Units("initialisation (seed)", min_per_cell=2, note="one model per seed; a seed draws its weights and its data")
PAIRED_SEEDS = Units("initialisation (seed)", min_per_cell=2,
                     note="random and fully trained models of one seed share their data: a matched pair")
METRIC = Choice("metric", "test", ("fresh",),
                "held-out strings (hash partition / fixed split) vs the training distribution (fresh draws; every pair): "
                "fresh draws mostly score items the model trained on, so this reading is shown and never counted "
                "for robustness (it carried half this study's 'robust' labels before)", counts=False)
LOG2 = math.log10(2)
V2 = "2026-11-30"  # the engine's rules (issue 16), revised in this round (issue 21)
ROUND5 = "2026-12-03"  # issue 34: mod-add as a rate of restarts, memorisation bits from the loss, subspace per task
GEN = f"held-out accuracy ≥ {ev.GENERALISES:g}"


def _regime(claimed: str, checked: str, inside: bool, needs: str, sweeps: str) -> Regime:
    hours = paper_gpu_hours(sweeps)
    cost = f"{hours:.1f} GPU-hours" if hours >= 1 else f"{60 * hours:.1f} GPU-minutes"  # never "≈ 0.0 hours"
    return Regime(claimed, checked, inside, f"{needs} (the paper plan's {sweeps} sweeps: ≈ {cost} on one H200)")


def _solve_rule(accuracy: Band, over_chance: Band, labels: dict[str, str], version: int = 1) -> AllOf:
    """Random models' accuracy in `accuracy`, and above the chance line by `over_chance`."""
    return AllOf((Mean("random", accuracy, what="accuracy", labels=labels, bounds=(0.0, 1.0)),
                  Contrast("random", "chance", over_chance, what="accuracy", labels=labels, bounds=(0.0, 1.0))),
                 version=version, date=V2 if version == 2 else "2026-12-01")


# rule v4's band on the share of restarts that generalise: above one half (the paper's median) to reproduce; below
# 0.35 not reproduced, so that 8 restarts of which none generalises (Wilson upper edge 0.32) can read it
RATE_BAND = above(0.35, 0.5)


def _rate_rule(labels: dict[str, str], rate: Band = RATE_BAND, version: int = 4) -> AllOf:
    """Modular addition (v4): the share of restarts that generalise (Wilson interval) above one half — the
    paper's median of restarts — and mean accuracy above the chance line of the same rows."""
    return AllOf((Rate("generalises", rate, what=f"share of restarts that generalise ({GEN})", labels=labels),
                  Contrast("random", "chance", above(0.1, 0.2), what="accuracy", labels=labels, bounds=(0.0, 1.0))),
                 version=version, date=ROUND5)


MOD_ADD_WHY = ("mean accuracy over 4 restarts against 0.9 (v3), on an outcome that is bimodal — a restart generalises "
               "(0.88–1 held out) or only memorises (0.1–0.3): seeds 5–8 read 1.000, 1.000, 0.302, 0.953, so 8 seeds "
               "gave 0.898 [0.696, 1], inconclusive, and 35 of the 70 subsets of 4 read reproduced; the rate of "
               "restarts that generalise, as the paper's median of restarts does, is judged instead on 8 fresh seeds")


def _solves(plan: Plan[RandomParams], task: str) -> Claim:
    t, size = plan.params.tasks[task], task_size(PAPER_PARAMS.tasks[task].config)
    labels = {"random": f"random width {t.wide}", "chance": "copy baseline E[1/m]" if task == "needle" else
              "chance line (best input-blind predictor)"}
    scoring = (Choice("scoring", "published", ("full",), "the published metric never scores the first answer "
                      "digit; the full metric scores every digit and the stop"),) if task == "decimal_add" else ()
    rate = task == "mod_add"
    labels["generalises"] = f"random width {t.wide}"
    v3 = _solve_rule(above(0.8, 0.9), above(0.1, 0.2), labels, version=3)
    solved = (f"most restarts generalise: the share of restarts with {GEN} (Wilson interval) lies above one half, as "
              "the paper's median asks, and mean accuracy lies well above the chance line" if rate else
              "mean accuracy over restarts above 0.9 and well above the chance line")
    return Claim(
        slug=SLUGS[task],
        title=f"Random transformers solve {LABELS[task]}",
        statement=f"A random transformer of width {t.wide} (embeddings and unembedding trained, everything else frozen "
        f"at initialisation) solves {LABELS[task]} ({solved}, the chance line being the best input-blind predictor's "
        "score under the same scoring), beside a fully trained baseline that solves it in the same pipeline.",
        paper_statement="At width 1024, random transformers reach 100% on modular addition, needle-in-a-haystack, decimal "
        "addition and parenthesis balancing (median of 10 restarts; Zhong & Andreas 2024, Fig. 2).",
        evidence=partial(ev.solves, plan.params, task),
        rule=_rate_rule(labels) if rate else v3,
        units=SEEDS,
        control=Control("chance line of the same rows and scoring: the best input-blind predictor"
                        + (" or, higher, copying a random value in context" if task == "needle" else "")
                        + " (and the fully trained baseline's gate)", group="chance"),
        choices=(METRIC, *scoring),
        alternatives=(Alternative("stricter rate (Wilson interval above 0.65)",
                                  rule=_rate_rule(labels, above(0.5, 0.65), version=1)),) if rate else
        (Alternative("stricter band (accuracy above 0.95, 0.3 above chance)",
                     rule=_solve_rule(above(0.9, 0.95), above(0.2, 0.3), labels)),),
        history=(*[Revision(v3, ROUND5, MOD_ADD_WHY)] * rate,
                 Revision(_solve_rule(above(0.8, 0.9), above(0.1, 0.2), labels, version=2), V2,
                          "chance lines 1/p, the copy line, the majority answer and 0.1 per digit — not the best "
                          "input-blind predictor under the claim's scoring", {"chance": "v2"}),
                 pre_engine(Mean("random", above(0.9499, 0.95), what="accuracy", labels=labels, version=1, date=PRE_ENGINE),
                            ": median accuracy ≥ 0.95 at the largest width", {"chance": "v2"})),
        figure=f"solves_{task}",
        regime=_regime(f"width 1024 on {size}", f"width {t.wide} on {task_size(t.config)}, {t.random.steps:,} steps × "
                       f"{t.random.batch:,}", t.wide >= 1024 and task_size(t.config) == size, f"width 1024 on {size}",
                       f"acc-{task}"),
        replicate=(f"acc-{task}",),
    )


def _width(plan: Plan[RandomParams]) -> Claim:
    labels = {"wide": "widest random", "narrow": "width-16 random"}
    tasks = [k for k, t in plan.params.tasks.items() if len(t.random_widths) > 1]
    wide = sorted({plan.params.tasks[k].wide for k in tasks})
    return Claim(
        slug="width-matters",
        title="Narrow random transformers do much worse",
        statement="On every task with a narrow random width whose fully trained baseline works, random transformers at "
        f"the widest width score higher than at width {min(plan.params.tasks[k].narrow for k in tasks)} (paired by "
        "task and restart).",
        paper_statement="At width 16 random transformers reach only 1.3–87.3% on the four tasks (Fig. 2).",
        evidence=partial(ev.width_matters, plan.params),
        rule=Contrast("wide", "narrow", above(0.05, 0.2), what="accuracy", labels=labels, bounds=(0.0, 1.0), version=2),
        units=Units("(task, seed)", min_per_cell=2),
        control=Control("the same tasks and restarts at width 16", group="narrow"),
        choices=(METRIC, Choice("tasks", "gated", ("solved",),
                                "pool every gated task, or only those the wide random models solved")),
        history=(pre_engine(AllOf((Mean("wide", above(0.9499, 0.95), what="accuracy", labels=labels),
                                   Mean("narrow", below(0.95, 0.9501), what="accuracy", labels=labels)),
                                  version=1, date=PRE_ENGINE),
                            ": every task ≥ 0.95 at the largest width and < 0.95 at the smallest (medians per task → "
                            "means over units)"),),
        regime=_regime("width 16 against width 1024 on the four tasks", f"width 16 against width "
                       f"{', '.join(map(str, wide))} on {', '.join(tasks)}", min(wide) >= 1024 and len(tasks) == 4,
                       "width 1024 on the four tasks", "acc-"),
        replicate=tuple(f"acc-{k}" for k in tasks),
    )


def _ablation(plan: Plan[RandomParams]) -> Claim:
    labels = {"all three": "all three trained",
              "best partial": "best variant without the unembedding or without every input embedding"}
    return Claim(
        slug="ablation",
        title="Embeddings and unembedding must both train",
        statement="On tasks that a random transformer solves with token embedding, position embedding and unembedding "
        "trained, every variant that trains only the unembedding or only input embeddings (token, position, "
        "token + position) does clearly worse (paired by task and restart).",
        paper_statement="In general, embedding and unembedding parameters must both be trained (Table 1).",
        evidence=partial(ev.ablation, plan.params),
        rule=Contrast("all three", "best partial", above(0.05, 0.1), what="accuracy", labels=labels, version=2),
        units=Units("(task, seed)", min_per_cell=2),
        control=Control("the best partial variant on the same task and restart", group="best partial"),
        choices=(METRIC, Choice("partials", "partial", ("every variant",), "token + unembedding trains an "
                                "embedding and the unembedding, so it is not a partial variant by default")),
        history=(pre_engine(Contrast("all three", "best partial", above(0.0999, 0.1), what="accuracy", labels=labels,
                                     version=1, date=PRE_ENGINE),
                            ": the best single matrix (token, position or unembedding) ≥ 0.1 below all three",
                            {"partials": "single"}),),
        regime=_regime("width 1024 on the four tasks", "width 1024 on the four tasks" if plan.params.ablation_tasks
                       else "not run", bool(plan.params.ablation_tasks), "the ablation at width 1024", "ablation-"),
        replicate=tuple(f"ablation-{k}" for k in plan.params.ablation_tasks),
    )


def _subspace(plan: Plan[RandomParams]) -> Claim:
    labels = {"trained": "trained random model", "init": "same model at initialisation", "null": "isotropic null"}
    frac = "top-k PC variance fraction"
    parts: Any = (Contrast("trained", "null", above(0.05, 0.1), what=frac, labels=labels, bounds=(0.0, 1.0)),
                  Contrast("trained", "init", above(0.0, 0.05), what=frac, labels=labels, bounds=(0.0, 1.0)))
    v2 = AllOf((*parts, Contrast("trained ratio", "null ratio", above(math.log10(1.2), math.log10(1.5)),
                                 kind_of="log10_ratio", what="PC/neuron ratio")), version=2, date=V2)
    p = plan.params
    v3 = AllOf(parts, version=3, date="2026-12-01")
    tasks = tuple(p.tasks)
    task_labels = {f"{g} {t}": f"{labels[g]}, {LABELS[t]}" for g in labels for t in tasks}
    # v4: each task on its own, the trained network against the same network at initialisation on the same probe
    # rows (part (1) of v3, against the isotropic null, is passed by the untrained network: printed, not judged)
    v4 = AllOf(tuple(Contrast(f"trained {t}", f"init {t}", above(0.0, 0.05), what=frac, labels=task_labels,
                              bounds=(0.0, 1.0)) for t in tasks), version=4, date=ROUND5)
    return Claim(
        slug="subspace",
        title="Random transformers work in low-dimensional subspaces",
        statement="On every task they solve, judged task by task, trained random transformers' hidden states (layers "
        "≥ 1) put more variance in their top-10 principal components than the same network at initialisation on "
        "the same probe rows: training selects a low-dimensional subspace. (That they hold far more than an isotropic "
        "sample of the same shape, and that PCs hold far more than neurons, is reported, not judged: the untrained "
        "network shows both.)",
        paper_statement="Embedding-only training works by selecting low-dimensional subspaces of the random "
        "network's representations rather than sparse sets of neurons (Zhong & Andreas 2024, §6).",
        evidence=partial(ev.subspace, p),
        rule=v4,
        units=Units("initialisation (seed)", min_per_cell=2, note="per task; layers ≥ 1 averaged within a model"),
        control=Control("the same network at initialisation on the same probe rows, one per task",
                        group=f"init {tasks[0]}"),
        choices=(Choice("k", 10, (4,), "how many components / neurons"),
                 Choice("tasks", "solved", ("all",),
                        "only solved tasks say how a task is solved; all = every task whose baseline works"),
                 Choice("layers", "all", ("last",), "every layer ≥ 1, or only the last")),
        history=(Revision(v3, ROUND5, "tasks pooled as (task, seed) units although they disagree (quick store of stop "
                          "31: trained minus init +0.31 modular addition, +0.15 decimal, 0 brackets, −0.33 needle), and "
                          "part (1), trained minus the isotropic null, is passed by the untrained network on the same "
                          "rows (0.72 at init against a null of 0.07): each task is now judged on its own against the "
                          "network at initialisation", {"view": "pooled"}),
                 Revision(v2, V2, "part (3), the PC/neuron ratio against the isotropic null, is passed by the untrained "
                          "network (ratio 8–11 at initialisation, 7–10 after training): it says nothing about training",
                          {"ratio": True, "view": "pooled"}),
                 pre_engine(AllOf((Mean("trained", above(0.4999, 0.5), what=frac, labels=labels),
                                   Mean("trained ratio", above(1.9999, 2.0), what="PC/neuron ratio", labels=labels)),
                                  version=1, date=PRE_ENGINE),
                            ": median top-10 PC fraction ≥ 0.5 and PC/neuron ratio ≥ 2 on solved tasks, no null",
                            {"ratio": True, "view": "pooled"})),
        regime=_regime("width-1024 random transformers on the tasks they solve", "width "
                       f"{', '.join(sorted({str(t.wide) for t in p.tasks.values()}))} on the quick tasks they solve",
                       min(t.wide for t in p.tasks.values()) >= 1024, "width 1024", "acc-"),
        replicate=tuple(f"acc-{k}" for k in p.tasks),
    )


def _memorisation(plan: Plan[RandomParams]) -> Claim:
    labels = {"full": "fully trained", "random": "random"}
    m, pm = plan.params.memorise, PAPER_PARAMS.memorise

    def ratio(lo: float, hi: float, **kw: Any) -> Contrast:
        return Contrast("full", "random", above(lo, hi), kind_of="log10_ratio", what="bits per trainable parameter",
                        labels=labels, **kw)

    return Claim(
        slug="memorisation",
        title="Random transformers memorise less efficiently",
        statement="On a random lookup table in the published token format (x, y + n → value), fully trained "
        "transformers store at least twice as many bits per trainable parameter as random transformers of the same "
        "shape (paired by seed), bits counted by a lower bound from the models' cross-entropy on the table: the "
        "values are uniform, so I ≥ N·log2 M − Σ CE in bits (N items, M values).",
        paper_statement="Random transformers store 0.41 bits per trainable parameter, fully trained ones 2.88 "
        "(Zhong & Andreas 2024, §5.1).",
        evidence=ev.memorisation,
        rule=ratio(math.log10(1.5), LOG2, version=4, date=ROUND5),
        units=PAIRED_SEEDS,
        control=Control("the random transformer of the same seed and shape", group="random"),
        choices=(Choice("bits", "loss", ("fano", "published"), "Fano's bound on the hit rate is loose near chance "
                        "(a hit is worth 0.70 bits at 2.5% recall, 2.0 at 7.5%); the published measure credits every "
                        "hit with log2 M bits, chance hits included"),),
        alternatives=(Alternative("ratio ≥ 4", rule=ratio(math.log10(3), math.log10(4))),),
        history=(Revision(ratio(math.log10(1.5), LOG2, version=3, date="2026-12-01"), ROUND5, "bits by Fano's "
                          "inequality on the hit rate: a valid bound, but its slack near chance differs between the "
                          "models (a correct recall is worth 0.70 bits at the random models' 2.5% recall, 2.0 at the "
                          "fully trained models' 7.5%), which made the 4× ratio; the cross-entropy bound gave 1.75× "
                          "[1.42, 2.17] on seeds 1–7", {"bits": "fano"}),
                 Revision(ratio(math.log10(1.5), LOG2, version=2, date=V2), V2, "bits = (hits − N/M) · log2 M, not a "
                          "lower bound at 2–8% recall: storing only each x's most common value (≤ 896 bits) gets more "
                          "hits than a random model credited 2,100 bits", {"bits": "chance-corrected"}),
                 pre_engine(ratio(LOG2 - 1e-6, LOG2, version=1, date=PRE_ENGINE), ": ratio ≥ 2 of uncorrected bits",
                            {"bits": "published"})),
        regime=_regime(f"width {pm.width} on a {pm.config['n_keys']}² table trained to capacity ({pm.full.steps:,} steps × "
                       f"{pm.full.batch:,})", f"width {m.width} on a {m.config['n_keys']}² table, {m.full.steps:,} (fully "
                       f"trained) / {m.random.steps:,} (random) steps × {m.full.batch:,}, far from capacity (the fully "
                       "trained models' share of it: the card's notes)", m == pm,
                       "the published table and budget, trained to capacity", "memorise"),
        replicate=("memorise",),
    )


def _language(plan: Plan[RandomParams]) -> Claim:
    lm = plan.params.language
    width = lm.random_width if lm is not None else PAPER_PARAMS.language.random_width  # type: ignore[union-attr]
    labels = {"random": f"random width {width}", "unigram": "unigram", "full": "smaller fully trained"}
    ce = "validation cross-entropy (nats/token)"
    checked = "not run" if lm is None else (f"width {lm.random_width} on the KJV ({lm.config['vocab_size']}-token BPE), "
                                            f"{lm.random.steps:,} steps × {lm.random.batch} × {lm.config['seq_len']} tokens")
    return Claim(
        slug="language",
        title="Random transformers model language, matched by much smaller trained models",
        statement=f"A random transformer of width {width} beats the unigram cross-entropy by more than 0.1 "
        "nats, and a fully trained transformer with at least 4× fewer trainable parameters matches it "
        "(cross-entropy at most 0.05 nats higher), paired by seed.",
        paper_statement="A random width-512 transformer reaches cross-entropy 2.64 on TinyStories, matched by "
        "a fully trained model with ~15× fewer trainable parameters (Zhong & Andreas 2024, §5.2).",
        evidence=partial(ev.language, plan.params),
        rule=AllOf((Contrast("random", "unigram", below(-0.1, 0.0), what=ce, labels=labels),
                    Contrast("full", "random", below(0.05, 0.15), what=ce, labels=labels)), version=2, date=V2),
        units=PAIRED_SEEDS,
        control=Control("the unigram model of the training text, and the smaller fully trained model", group="unigram"),
        choices=(Choice("matched", "4x", ("2x", "8x"), "how many times fewer parameters the matching model has"),),
        history=(pre_engine(AllOf((Contrast("random", "unigram", below(-0.1, -0.0999), what=ce, labels=labels),
                                   Contrast("full", "random", below(0.0, 1e-9), what=ce, labels=labels)),
                                  version=1, date=PRE_ENGINE),
                            ": CE < unigram − 0.1 and a fully trained model with ≥ 2× fewer parameters at least as good",
                            {"matched": "2x"}),),
        regime=_regime("width 512 on TinyStories, 5 epochs", checked, False, "TinyStories (not available offline; the "
                       "paper plan trains 5 KJV epochs at width 512)", "lm-"),
        replicate=("lm-random", "lm-full") if lm is not None else (),
    )


def _circuit(plan: Plan[RandomParams]) -> Claim:
    labels = {"random": "random student", "full": "fully trained student"}
    y = "relative KL (KL / KL of the mean-distribution guess)"
    c, pc = plan.params.circuit, PAPER_PARAMS.circuit

    def trend(band: Band, version: int = 1) -> Trend:
        return Trend("random", band, x="log2 target width", y=y, controls=("full",), control_band=above(0.0, 0.01),
                     labels=labels, version=version)

    return Claim(
        slug="circuit",
        title="Circuit imitation needs low-dimensional targets",
        statement="The relative KL of a random student imitating a random target transformer grows with the target's "
        "width (per doubling), faster than that of a fully trained student of the same shape.",
        paper_statement="Embedding-only students imitate random targets only when the target is "
        "low-dimensional: KL jumps between target widths 12, 16 and 32 (Zhong & Andreas 2024, §5.3).",
        evidence=ev.circuit,
        rule=trend(above(0.0, 0.02), version=2),
        units=PAIRED_SEEDS,
        control=Control("a fully trained student of the same shape", group="full"),
        choices=(Choice("kl", "relative", ("absolute",), "KL relative to the input-independent guess, or raw"),),
        alternatives=(Alternative("stricter slope band (> 0.05 per doubling)", rule=trend(above(0.02, 0.05))),),
        history=(pre_engine(AllOf((Contrast("random widest", "random narrowest", above(LOG2 - 1e-6, LOG2),
                                            kind_of="log10_ratio", what=y),
                                   Mean("random widest", above(0.1999, 0.2), what=y),
                                   Contrast("random widest", "full widest", above(-1e-9, 0.0), what=y)),
                                  version=1, date=PRE_ENGINE),
                            ": widest target ≥ 2× the narrowest, above 0.2 and above the fully trained student",
                            {"view": "endpoints"}),),
        regime=_regime(f"vocab {pc.config['vocab_size']}, {pc.config['seq_len']} positions, targets of width "
                       f"{pc.targets[0]}–{pc.targets[-1]}, student width {pc.student['d_model']}",
                       f"vocab {c.config['vocab_size']}, {c.config['seq_len']} positions, targets of width "
                       f"{', '.join(map(str, c.targets))}, student width {c.student['d_model']}", c == pc,
                       "the published target and student sizes", "circuit"),
        replicate=("circuit",),
    )


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    return [*(_solves(plan, task) for task in plan.params.tasks),
            *(make(plan) for make in (_width, _ablation, _subspace, _memorisation, _language, _circuit))]
# fmt: on
