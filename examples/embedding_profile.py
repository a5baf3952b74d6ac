"""What do embedding-only ("random") transformers compute when trained on Boolean tasks?

Kövér et al. find that *untrained* random transformers compute low-sensitivity functions with many
zero-sensitivity strings; Zhong & Andreas train only the embeddings of such transformers. This asks
what the functions of embedding-only-trained transformers look like — average sensitivity and K_0 of
the learned function on all 2^n strings — beside fully trained transformers of the same shape on the
same data and initial weights (the matched control), and beside the target with the same number of
wrong strings placed uniformly at random (a same-agreement null: are the errors biased to low
sensitivity, or just errors?). A seed is the independent unit.

    learnability study run examples/embedding_profile.py               # quick: ~1.5 CPU-min (92 CPU-s measured)
    learnability study run examples/embedding_profile.py --scale tiny  # the test suite's smoke run
"""

from dataclasses import dataclass

import numpy as np

from learnability.boolean.functions import resolve_function
from learnability.studies import (
    Choice,
    Claim,
    Contrast,
    Control,
    Evidence,
    Figure,
    Obs,
    Panel,
    Plan,
    Regime,
    Study,
    Sweep,
    Table,
    Units,
    above,
    below,
    grouped_series,
    metric,
    num,
    spread,
)  # fmt: skip


# -- plan: what each scale fixes -------------------------------------------------------------------
@dataclass(frozen=True)
class Params:
    n: int  # input length: profiles are exact on all 2^n strings
    width: int  # d_model = d_ff
    functions: tuple[
        str, ...
    ]  # targets (the claims read PARITY, and the random function as alternative)
    seeds: tuple[
        int, ...
    ]  # a seed fixes the initial weights and the data stream of both conditions
    steps: int  # the most steps; a run stops once it fits every string
    batch: int
    eval_every: int


RANDOM = "random:seed=1"  # one fixed uniformly random function (average sensitivity about n/2)
PLANS = {
    "tiny": Plan("tiny", Params(5, 16, ("parity", RANDOM), (0, 1, 2), 80, 64, 20),
                 {"*": "smoke test: width 16, 80 steps, two targets"}),
    "quick": Plan("quick", Params(7, 32, ("parity", RANDOM, "majority", "first"), tuple(range(6)), 1500, 128, 50),
                  cost="about 1.5 CPU-minutes (92 CPU-s measured)"),
}  # fmt: skip
NAMES = {"parity": "PARITY", RANDOM: "random function", "majority": "MAJORITY", "first": "FIRST"}
# each condition its own recipe (fixed on pilot seeds 100-101, never on the plan's seeds)
RECIPES = {"embeddings": (1e-2, 0.0), "full": (1e-3, 0.1)}  # (lr, weight decay)
CONDITIONS = {"embeddings": "embedding-only", "full": "fully trained", "null": "random errors"}


# -- sweeps: every target × both conditions × the seeds ---------------------------------------------
def sweeps(plan: Plan[Params]) -> list[Sweep]:
    p = plan.params
    base = {
        "task": {"name": "boolean", "n": p.n, "targets": "pm1", "mode": "online"},
        "model": dict(arch="boolean_transformer", d_model=p.width, d_ff=p.width, max_len=p.n),
        "train": dict(steps=p.steps, batch_size=p.batch, eval_every=p.eval_every, converge_acc=1.0),
        "measure": [
            "profile"
        ],  # average sensitivity, K_0 and agreement of the model's own function
        "save_model": False,
    }
    zipped = {"train.freeze": list(RECIPES), "train.lr": [r[0] for r in RECIPES.values()],
              "train.weight_decay": [r[1] for r in RECIPES.values()]}  # fmt: skip
    return [Sweep("embedding_profile/runs", "train", base, {"task.function": list(p.functions)}, zip=zipped,
                  seeds=list(p.seeds), seed_also=["data_seed"])]  # fmt: skip


# -- evidence: per seed, the learned function's profile in both conditions ---------------------------
def by_seed(results, function: str, freeze: str) -> dict[int, object]:
    runs = results.of("runs")
    return {r.config["seed"]: r for r in runs if r.config["task"]["function"] == function
            and r.config["train"]["freeze"] == freeze}  # fmt: skip


def as_per_bit(record) -> float:
    return num(metric(record, "model_as")) / record.config["task"]["n"]


def k0_share(record) -> float:
    return num(metric(record, "model_K0")) / 2 ** record.config["task"]["n"]


def random_errors_as(function: str, n: int, errors: int, seed: int, draws: int = 200) -> float:
    """E[as/n] of the target with `errors` strings flipped uniformly at random (the same-agreement null)."""
    table = resolve_function(function, n).truth_table().astype(np.int8)
    rng = np.random.default_rng(seed)
    tables = np.repeat(table[None], draws, 0)
    for row in tables:
        row[rng.choice(table.size, errors, replace=False)] ^= 1
    x = np.arange(table.size)
    return float(sum((tables != tables[:, x ^ (1 << i)]).mean() for i in range(n)) / n)


def paired_profile(value, null: bool = False):
    def evidence(results, choices) -> Evidence:
        f = choices["target"]
        emb, full = by_seed(results, f, "embeddings"), by_seed(results, f, "full")
        seeds = sorted(emb.keys() & full.keys())  # pairs only: both conditions of a seed finished
        if not seeds:
            return Evidence(missing=f"no seed has both conditions of {NAMES[f]}")
        n = results.params.n
        obs = [Obs(s, value(emb[s]), group="embeddings") for s in seeds]
        if (
            null
        ):  # the target with as many wrong strings as the embedding-only model, placed at random
            wrong = {
                s: round((1 - num(metric(emb[s], "function_agreement"))) * 2**n) for s in seeds
            }
            obs += [Obs(s, random_errors_as(f, n, wrong[s], s), group="null") for s in seeds]
        else:
            obs += [Obs(s, value(full[s]), group="full") for s in seeds]
        agree = [num(metric(emb[s], "function_agreement")) for s in seeds]
        target = num(metric(emb[seeds[0]], "target_as"))
        notes = (f"{NAMES[f]} at n = {n} (target as = {target:.3g}, K_0 = {metric(emb[seeds[0]], 'target_K0')}); "
                 f"embedding-only agreement with the target {spread(agree)}")  # fmt: skip
        return Evidence(obs, notes=notes)

    return evidence


# -- claims ----------------------------------------------------------------------------------------
def claims(plan: Plan[Params]) -> list[Claim]:
    p = plan.params
    target = Choice(
        "target", "parity", (RANDOM,), "a random function (sensitivity ~n/2) instead of PARITY (n)"
    )
    units = Units(
        "seed", 3, "a seed fixes the initial weights and the data stream of both conditions"
    )
    regime = Regime(claimed=f"2-layer, 2-head transformers of width {p.width} on n = {p.n} bits (this question's "
                    "own regime)", checked=f"width {p.width}, n = {p.n}, ≤ {p.steps} steps", inside=True,
                    needs="widths 128-1024 and n ≥ 12 would show whether it persists")  # fmt: skip
    common = dict(units=units, regime=regime, replicate=("runs",),
                  paper_statement="Cross-paper: Kövér et al. (2026) — random transformers compute low-sensitivity "
                  "functions; Zhong & Andreas (2024) — training only the embeddings solves algorithmic tasks.")  # fmt: skip
    per_bit = "average sensitivity / n"
    return [
        Claim(slug="lower-sensitivity-than-full", title="Embedding-only models compute less sensitive functions",
              statement="Trained on a sensitive target, an embedding-only transformer ends with a function of "
              "lower average sensitivity than the fully trained transformer of the same shape, data and seed.",
              evidence=paired_profile(as_per_bit),
              rule=Contrast("embeddings", "full", below(-0.1, 0.0), what=per_bit, labels=CONDITIONS, bounds=(0, 1)),
              control=Control("fully trained, same shape, data and initial weights", group="full"),
              choices=(target,), **common),
        Claim(slug="errors-toward-low-sensitivity", title="Their errors lower the sensitivity",
              statement="The embedding-only model's function is less sensitive than the target with the same "
              "number of wrong strings placed uniformly at random: its errors are biased to low sensitivity.",
              evidence=paired_profile(as_per_bit, null=True),
              rule=Contrast("embeddings", "null", below(-0.05, 0.0), what=per_bit, labels=CONDITIONS, bounds=(0, 1)),
              control=Control("the target with the same number of errors at random strings (200 draws per seed)",
                              group="null"),
              choices=(target,), **common),
        Claim(slug="more-zero-sensitivity", title="Embedding-only models keep zero-sensitivity strings",
              statement="Trained on a target without zero-sensitivity strings, an embedding-only model ends "
              "with a larger share of zero-sensitivity strings (K_0 / 2^n) than the fully trained one.",
              evidence=paired_profile(k0_share),
              rule=Contrast("embeddings", "full", above(0.0, 0.05), what="K_0 / 2^n", labels=CONDITIONS, bounds=(0, 1)),
              control=Control("fully trained, same shape, data and initial weights", group="full"),
              choices=(target,), **common),
    ]  # fmt: skip


# -- exhibits: the learned functions' sensitivity histograms and a profile table ---------------------
def exhibits(results, plan: Plan[Params]) -> list:
    p = plan.params
    panels, rows = [], []
    for f in p.functions:
        runs = {c: list(by_seed(results, f, c).values()) for c in RECIPES}
        points = [(c, k / p.n, num(v) / 2**p.n) for c, rs in runs.items() for r in rs
                  for k, v in enumerate(metric(r, "model_counts") or [])]  # fmt: skip
        target = next((r for rs in runs.values() for r in rs), None)
        lines = [(num(metric(target, "target_K0")) / 2**p.n, "target K_0 / 2^n")] if target else []
        panels.append(Panel(NAMES[f], "sensitivity k / n", "share of strings with s(x) = k",
                            series=grouped_series(points, labels=CONDITIONS), hlines=lines))  # fmt: skip
        for c, rs in runs.items():
            rows.append([NAMES[f], CONDITIONS[c], len(rs), spread(as_per_bit(r) * p.n for r in rs),
                         spread(metric(r, "model_K0") for r in rs), spread(metric(r, "function_agreement") for r in rs)])  # fmt: skip
    caption = (f"Sensitivity profiles K_k / 2^n of the learned functions at n = {p.n} (mean and 95% interval "
               "over seeds): embedding-only against fully trained, same shape, data and seeds.")  # fmt: skip
    table = Table("learned functions", ["target", "condition", "seeds", "average sensitivity", "K_0",
                                        "agreement with target"], rows)  # fmt: skip
    return [Figure("profiles", caption, panels, ncols=min(len(panels), 2)), table]


STUDY = Study(
    name="embedding_profile",
    title="What do embedding-only transformers compute on Boolean tasks?",
    paper="own question, after Kövér et al. (ICML 2026) and Zhong & Andreas (NeurIPS 2024)",
    protocol_note="Boolean transformer (2 layers, 2 heads, post-LN), ±1 targets, fresh batches; "
    "embedding-only at lr 1e-2 (wd 0) against full training at lr 1e-3 (wd 0.1), stopping once the "
    "model fits every string; profiles exact on all 2^n strings.",
    plans=PLANS,
    sweeps=sweeps,
    claims=claims,
    exhibits=exhibits,
)
