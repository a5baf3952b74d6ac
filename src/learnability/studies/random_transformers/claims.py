"""Study `random`, claims: each algorithmic task solved at the widest width (beside a fully trained baseline
that solves it, against its chance line), width matters, every embedding matrix is needed, the solutions
live in low-dimensional subspaces (against an isotropic null and the model at init), and beyond the
algorithmic tasks: memorisation capacity, language modelling against smaller fully trained models, and
imitation of random target circuits."""

from __future__ import annotations

import math
from typing import Any

from learnability.studies import (
    PRE_ENGINE,
    AllOf,
    Alternative,
    Band,
    Choice,
    Claim,
    Contrast,
    Control,
    Mean,
    Plan,
    Trend,
    Units,
    above,
    below,
    pre_engine,
)
from learnability.studies.random_transformers import evidence as ev
from learnability.studies.random_transformers.plan import LABELS, RandomParams

# fmt: off
SLUGS = {"mod_add": "solves-mod-add", "needle": "solves-needle", "decimal_add": "solves-decimal", "parens": "solves-parens"}
SEEDS = Units("initialisation (seed)", min_per_cell=2, note="one model per seed; its data seed is its seed")
PAIRED_SEEDS = Units("initialisation (seed)", min_per_cell=2,
                     note="random and fully trained models of one seed share their data order: a matched pair")
METRIC = Choice("metric", "test", ("fresh",),
                "held-out strings (hash partition / fixed split) vs fresh draws of the training distribution")
LOG2 = math.log10(2)


def _solve_rule(accuracy: Band, over_chance: Band, labels: dict[str, str], version: int = 1) -> AllOf:
    """Random models' accuracy in `accuracy`, and above the chance line by `over_chance`."""
    return AllOf((Mean("random", accuracy, what="accuracy", labels=labels, bounds=(0.0, 1.0)),
                  Contrast("random", "chance", over_chance, what="accuracy", labels=labels, bounds=(0.0, 1.0))),
                 version=version)


def _solves(plan: Plan[RandomParams], task: str) -> Claim:
    t = plan.params.tasks[task]
    labels = {"random": f"random width {t.wide}", "chance": "chance line"}
    scoring = (Choice("scoring", "published", ("full",), "the published metric never scores the first answer "
                      "digit; the full metric scores every digit and the stop"),) if task == "decimal_add" else ()
    return Claim(
        slug=SLUGS[task],
        title=f"Random transformers solve {LABELS[task]}",
        statement=f"A random transformer of width {t.wide} (embeddings and unembedding trained, everything else frozen "
        f"at initialisation) solves {LABELS[task]} (mean accuracy over restarts above 0.9 and well above "
        "the chance line), beside a fully trained baseline that solves it in the same pipeline.",
        paper_statement="At width 1024, random transformers reach 100% on modular addition, needle-in-a-haystack, decimal "
        "addition and parenthesis balancing (median of 10 restarts; Zhong & Andreas 2024, Fig. 2).",
        evidence=ev.solves(plan.params, task),
        rule=_solve_rule(above(0.8, 0.9), above(0.1, 0.2), labels, version=2),
        units=SEEDS,
        control=Control("chance line of the same test rows (and the fully trained baseline's gate)", group="chance"),
        choices=(METRIC, *scoring),
        alternatives=(Alternative("stricter band (accuracy above 0.95, 0.3 above chance)",
                                  rule=_solve_rule(above(0.9, 0.95), above(0.2, 0.3), labels)),),
        history=(pre_engine(Mean("random", above(0.9499, 0.95), what="accuracy", labels=labels, version=1, date=PRE_ENGINE),
                            ": median accuracy ≥ 0.95 at the largest width"),),
    )


def _width(plan: Plan[RandomParams]) -> Claim:
    labels = {"wide": "widest random", "narrow": "width-16 random"}
    return Claim(
        slug="width-matters",
        title="Narrow random transformers do much worse",
        statement="On every task whose fully trained baseline works, random transformers at the widest width score "
        f"higher than at width {min(t.narrow for t in plan.params.tasks.values())} (paired by task and restart).",
        paper_statement="At width 16 random transformers reach only 1.3–87.3% on the four tasks (Fig. 2).",
        evidence=ev.width_matters(plan.params),
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
        evidence=ev.ablation(plan.params),
        rule=Contrast("all three", "best partial", above(0.05, 0.1), what="accuracy", labels=labels, version=2),
        units=Units("(task, seed)", min_per_cell=2),
        control=Control("the best partial variant on the same task and restart", group="best partial"),
        choices=(METRIC, Choice("partials", "partial", ("every variant",), "token + unembedding trains an "
                                "embedding and the unembedding, so it is not a partial variant by default")),
        history=(pre_engine(Contrast("all three", "best partial", above(0.0999, 0.1), what="accuracy", labels=labels,
                                     version=1, date=PRE_ENGINE),
                            ": the best single matrix (token, position or unembedding) ≥ 0.1 below all three",
                            {"partials": "single"}),),
    )


def _subspace(plan: Plan[RandomParams]) -> Claim:
    labels = {"trained": "trained random model", "init": "same model at initialisation", "null": "isotropic null",
              "trained ratio": "trained random model", "null ratio": "isotropic null"}
    frac = "top-k PC variance fraction"
    return Claim(
        slug="subspace",
        title="Random transformers work in low-dimensional subspaces",
        statement="On the tasks they solve, trained random transformers' hidden states (layers ≥ 1) put more variance "
        "in their top-10 principal components than an isotropic sample of the same shape and than the same "
        "network at initialisation on the same rows, and far more in PCs than in the same number of neurons "
        "(subspace selection, not sparsification).",
        paper_statement="Embedding-only training works by selecting low-dimensional subspaces of the random "
        "network's representations rather than sparse sets of neurons (Zhong & Andreas 2024, §6).",
        evidence=ev.subspace(plan.params),
        rule=AllOf((Contrast("trained", "null", above(0.05, 0.1), what=frac, labels=labels, bounds=(0.0, 1.0)),
                    Contrast("trained", "init", above(0.0, 0.05), what=frac, labels=labels, bounds=(0.0, 1.0)),
                    Contrast("trained ratio", "null ratio", above(math.log10(1.2), math.log10(1.5)),
                             kind_of="log10_ratio", what="PC/neuron ratio", labels=labels)), version=2),
        units=Units("(task, seed)", min_per_cell=2, note="layers ≥ 1 averaged within a model"),
        control=Control("isotropic Gaussian rows of the same shape, and the same network at init", group="null"),
        choices=(Choice("k", 10, (4,), "how many components / neurons"),
                 Choice("tasks", "solved", ("all",),
                        "only solved tasks say how a task is solved; all = every task whose baseline works"),
                 Choice("layers", "all", ("last",), "every layer ≥ 1, or only the last")),
        history=(pre_engine(AllOf((Mean("trained", above(0.4999, 0.5), what=frac, labels=labels),
                                   Mean("trained ratio", above(1.9999, 2.0), what="PC/neuron ratio", labels=labels)),
                                  version=1, date=PRE_ENGINE),
                            ": median top-10 PC fraction ≥ 0.5 and PC/neuron ratio ≥ 2 on solved tasks, no null"),),
    )


def _memorisation(plan: Plan[RandomParams]) -> Claim:
    labels = {"full": "fully trained", "random": "random"}

    def ratio(lo: float, hi: float, **kw: Any) -> Contrast:
        return Contrast("full", "random", above(lo, hi), kind_of="log10_ratio", what="bits per trainable parameter",
                        labels=labels, **kw)

    return Claim(
        slug="memorisation",
        title="Random transformers memorise less efficiently",
        statement="On a random lookup table in the published token format (x, y + n → value), fully trained "
        "transformers store at least twice as many chance-corrected bits per trainable parameter as random "
        "transformers of the same shape (paired by seed).",
        paper_statement="Random transformers store 0.41 bits per trainable parameter, fully trained ones 2.88 "
        "(Zhong & Andreas 2024, §5.1).",
        evidence=ev.memorisation,
        rule=ratio(math.log10(1.5), LOG2, version=2),
        units=PAIRED_SEEDS,
        control=Control("the random transformer of the same seed and shape", group="random"),
        choices=(Choice("bits", "chance-corrected", ("raw",), "hits at chance (table / n_values) carry no stored information"),),
        alternatives=(Alternative("ratio ≥ 4", rule=ratio(math.log10(3), math.log10(4))),),
        history=(pre_engine(ratio(LOG2 - 1e-6, LOG2, version=1, date=PRE_ENGINE), ": ratio ≥ 2 of uncorrected bits",
                            {"bits": "raw"}),),
    )


def _language(plan: Plan[RandomParams]) -> Claim:
    lm = plan.params.language
    labels = {"random": f"random width {lm.random_width}", "unigram": "unigram", "full": "smaller fully trained"}
    ce = "validation cross-entropy (nats/token)"
    return Claim(
        slug="language",
        title="Random transformers model language, matched by much smaller trained models",
        statement=f"A random transformer of width {lm.random_width} beats the unigram cross-entropy by more than 0.1 "
        "nats, and a fully trained transformer with at least 4× fewer trainable parameters matches it "
        "(cross-entropy at most 0.05 nats higher), paired by seed.",
        paper_statement="A random width-512 transformer reaches cross-entropy 2.64 on TinyStories, matched by "
        "a fully trained model with ~15× fewer trainable parameters (Zhong & Andreas 2024, §5.2).",
        evidence=ev.language,
        rule=AllOf((Contrast("random", "unigram", below(-0.1, 0.0), what=ce, labels=labels),
                    Contrast("full", "random", below(0.05, 0.15), what=ce, labels=labels)), version=2),
        units=PAIRED_SEEDS,
        control=Control("the unigram model of the training text, and the smaller fully trained model", group="unigram"),
        choices=(Choice("matched", "4x", ("2x", "8x"), "how many times fewer parameters the matching model has"),),
        history=(pre_engine(AllOf((Contrast("random", "unigram", below(-0.1, -0.0999), what=ce, labels=labels),
                                   Contrast("full", "random", below(0.0, 1e-9), what=ce, labels=labels)),
                                  version=1, date=PRE_ENGINE),
                            ": CE < unigram − 0.1 and a fully trained model with ≥ 2× fewer parameters at least as good",
                            {"matched": "2x"}),),
    )


def _circuit(plan: Plan[RandomParams]) -> Claim:
    labels = {"random": "random student", "full": "fully trained student"}
    y = "relative KL (KL / KL of the mean-distribution guess)"

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
    )
# fmt: on


def claims(plan: Plan[RandomParams]) -> list[Claim]:
    tasks = [_solves(plan, task) for task in plan.params.tasks]
    return [
        *tasks,
        _width(plan),
        _ablation(plan),
        _subspace(plan),
        _memorisation(plan),
        _language(plan),
        _circuit(plan),
    ]


__all__ = ["METRIC", "SLUGS", "claims"]
