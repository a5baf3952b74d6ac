"""Zero-sensitivity counts (K_0) along training.

Kövér et al. count zero-sensitivity strings of *random* transformers (many, far more than random
functions of the same balance); Hahn & Rofin study what training does to sensitivity. This follows
K_0 of the model's own function from initialisation (step 0) through training to the fit, on targets
without zero-sensitivity strings (PARITY, sparse XOR: K_0 = 0) and with many (MAJORITY), against
two references at every step: the target's own K_0 (computed exactly) and a same-balance random
function (`learnability.boolean.balance`: a uniformly shuffled truth table with exactly the model's
acceptance count at that step; its E[K_0] is exact). A seed is the independent unit.

    learnability study run examples/k0_training.py               # quick: ~0.5 CPU-min (33 CPU-s measured)
    learnability study run examples/k0_training.py --scale tiny  # the test suite's smoke run
"""

from dataclasses import dataclass

from learnability.boolean.balance import same_balance_moments
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
    Units,
    above,
    group_by,
    mean_series,
    metric,
    num,
)  # fmt: skip


# -- plan: what each scale fixes -------------------------------------------------------------------
@dataclass(frozen=True)
class Params:
    n: int  # profiles are exact on all 2^n strings at every tracked step
    width: int  # d_model = d_ff
    functions: tuple[str, ...]
    seeds: tuple[int, ...]  # a seed fixes the initial weights and the data stream
    steps: int  # the most steps; a run stops once it fits every string
    batch: int
    every: int  # track K_0 every this many steps (and at step 0)


PLANS = {
    "tiny": Plan("tiny", Params(5, 16, ("parity", "majority", "x1 ^ x3"), (0, 1, 2), 60, 64, 10),
                 {"*": "smoke test: width 16, 60 steps"}),
    "quick": Plan("quick", Params(7, 32, ("parity", "majority", "x1 ^ x3"), tuple(range(6)), 1500, 128, 10),
                  cost="about 0.5 CPU-minutes (33 CPU-s measured)"),
}  # fmt: skip
NAMES = {"parity": "PARITY", "majority": "MAJORITY", "x1 ^ x3": "sparse XOR x1⊕x3"}
GROUPS = {"model": "model", "null": "same-balance random function"}


# -- sweeps: full training of every target, K_0 tracked from step 0 ----------------------------------
def sweeps(plan: Plan[Params]) -> list[Sweep]:
    p = plan.params
    base = {
        "task": {"name": "boolean", "n": p.n, "targets": "pm1", "mode": "online"},
        "model": dict(arch="boolean_transformer", d_model=p.width, d_ff=p.width, max_len=p.n),
        "train": dict(steps=p.steps, batch_size=p.batch, lr=1e-3, weight_decay=0.1, eval_every=p.every,
                      converge_acc=1.0),
        "measure": ["profile"],
        "track": ["profile"],  # K_0, acceptance count and agreement at step 0 and every evaluation
        "save_model": False,
    }  # fmt: skip
    return [Sweep("k0_training/runs", "train", base, {"task.function": list(p.functions)},
                  seeds=list(p.seeds), seed_also=["data_seed"])]  # fmt: skip


# -- evidence: K_0 / 2^n of the model and of its same-balance null, per tracked step -----------------
def null_share(n: int, accept: int) -> float:
    """E[K_0] / 2^n of a uniformly shuffled truth table accepting exactly `accept` of the 2^n strings."""
    return same_balance_moments(n, int(accept)).mean_k0 / 2**n


def rows(record, window: str) -> list[dict]:
    """Tracked rows: 'before-fit' = steps after 0 up to (not including) the first that fits every
    string; 'all' = every row, step 0 and the fitted end included."""
    history = [h for h in metric(record, "history") or [] if h.get("model_accept") is not None]
    if window == "all":
        return history
    fit = next((h["step"] for h in history if num(h.get("function_agreement")) >= 1.0), None)
    return [h for h in history if h["step"] > 0 and (fit is None or h["step"] < fit)]


def pair(unit, hs: list[dict], n: int) -> list[Obs]:
    model = sum(h["model_K0"] for h in hs) / len(hs) / 2**n
    null = sum(null_share(n, h["model_accept"]) for h in hs) / len(hs)
    return [Obs(unit, model, group="model"), Obs(unit, null, group="null")]


def at_init(results, choices) -> Evidence:
    n, obs, constant = results.params.n, [], 0
    for seed, runs in group_by(results.of("runs"), lambda r: r.config["seed"]).items():
        first = (metric(runs[0], "history") or [{}])[0]  # every target starts from the same weights
        if first.get("step") != 0 or first.get("model_accept") is None:
            continue
        is_constant = first["model_accept"] in (0, 2**n)
        constant += is_constant
        if choices["constants"] == "include" or not is_constant:
            obs += pair(seed, [first], n)
    if not obs:
        return Evidence(missing="no run has a step-0 profile")
    return Evidence(
        obs, notes=f"step 0, n = {n}; {constant} of the initial models compute a constant"
    )


def during(results, choices) -> Evidence:
    f, n = choices["function"], results.params.n
    runs = [r for r in results.of("runs") if r.config["task"]["function"] == f]
    obs, fits = [], []
    for r in runs:
        hs = rows(r, choices["window"])
        fits.append(r.metrics.get("converged_step"))
        if hs:
            obs += pair(r.config["seed"], hs, n)
    if not obs:
        return Evidence(missing=f"no tracked rows before the fit of {NAMES[f]}")
    target = metric(runs[0], "target_K0")
    notes = (f"{NAMES[f]}, n = {n}, target K_0 = {target}; window {choices['window']}; "
             f"fitting steps {sorted(s for s in fits if s is not None)}, {sum(s is None for s in fits)} never fit")  # fmt: skip
    return Evidence(obs, notes=notes)


# -- claims ----------------------------------------------------------------------------------------
def claims(plan: Plan[Params]) -> list[Claim]:
    p = plan.params
    units = Units("seed", 3, "a seed fixes the initial weights and the data stream")
    regime = Regime(claimed=f"2-layer, 2-head transformers of width {p.width} on n = {p.n} bits (this question's "
                    "own regime; Kövér et al. state their bound for large N)",
                    checked=f"width {p.width}, n = {p.n}, ≤ {p.steps} steps", inside=True,
                    needs="n ≥ 12 and several widths would show how the excess scales")  # fmt: skip
    control = Control("a same-balance random function: the model's acceptance count, shuffled (exact E[K_0])",
                      group="null")  # fmt: skip
    common = dict(units=units, regime=regime, control=control, replicate=("runs",),
                  paper_statement="Cross-paper: Kövér et al. (2026) — random transformers have far more "
                  "zero-sensitivity strings than random functions; Hahn & Rofin (2024) — training is biased to "
                  "low sensitivity.")  # fmt: skip
    rule = Contrast(
        "model", "null", above(0.0, 0.02), what="K_0 / 2^n", labels=GROUPS, bounds=(0, 1)
    )
    return [
        Claim(slug="excess-at-init", title="At initialisation K_0 exceeds the same-balance null",
              statement="The untrained transformer (step 0) has more zero-sensitivity strings than a random "
              "function with its acceptance count.",
              evidence=at_init, rule=rule,
              choices=(Choice("constants", "include", ("exclude",), "a constant model equals its null exactly: "
                              "leave such initialisations out"),), **common),
        Claim(slug="excess-while-training", title="While training on PARITY, K_0 stays above the null",
              statement="Trained on PARITY (K_0 = 0), the model's functions before the fit keep more "
              "zero-sensitivity strings than random functions of the same balance, averaged over the steps.",
              evidence=during, rule=rule,
              choices=(Choice("function", "parity", ("x1 ^ x3",), "sparse XOR, the other target with K_0 = 0"),
                       Choice("window", "before-fit", ("all",), "every tracked step, step 0 and the fitted "
                              "end included")), **common),
    ]  # fmt: skip


# -- exhibits: K_0 against the step, with the target's K_0 and the same-balance null ------------------
def carried(record, until: int, every: int) -> list[dict]:
    """The tracked rows, the last one carried to `until` (a run stops at its fit and keeps that function)."""
    hs = rows(record, "all")
    if hs:
        hs = hs + [{**hs[-1], "step": s} for s in range(hs[-1]["step"] + every, until + 1, every)]
    return hs


def exhibits(results, plan: Plan[Params]) -> list:
    p = plan.params
    panels = []
    for f in p.functions:
        runs = [r for r in results.of("runs") if r.config["task"]["function"] == f]
        until = max((h["step"] for r in runs for h in rows(r, "all")), default=0)
        tracks = [carried(r, until, p.every) for r in runs]
        model = mean_series([(h["step"], h["model_K0"]) for hs in tracks for h in hs], "model K_0")
        null = mean_series([(h["step"], null_share(p.n, h["model_accept"]) * 2**p.n) for hs in tracks for h in hs],
                           "same-balance null E[K_0]", kind="dashed")  # fmt: skip
        target = [(num(metric(runs[0], "target_K0")), "target K_0")] if runs else []
        panels.append(Panel(NAMES[f], "training step", f"zero-sensitivity strings K_0 (of {2**p.n})",
                            series=[model, null], hlines=target))  # fmt: skip
    caption = (f"K_0 of the model's function along full training at n = {p.n} (mean and 95% interval over "
               "seeds; a run that fits stops and keeps its function), against the same-balance random-function "
               "null at each step and the target's K_0.")  # fmt: skip
    return [Figure("k0_along_training", caption, panels)]


STUDY = Study(
    name="k0_training",
    title="Zero-sensitivity counts along training",
    paper="own question, after Kövér et al. (ICML 2026) and Hahn & Rofin (ACL 2024)",
    protocol_note="Boolean transformer (2 layers, 2 heads, post-LN), ±1 targets, fresh batches, AdamW lr "
    "1e-3, wd 0.1, stopping once the model fits every string; K_0 exact at step 0 and every evaluation.",
    plans=PLANS,
    sweeps=sweeps,
    claims=claims,
    exhibits=exhibits,
)
