"""Are embedding-only solutions sharper, and do they blow up LayerNorm more, than fully trained ones?

Hahn & Rofin tie sensitive functions to sharp minima and large LayerNorm blowup; Zhong & Andreas
train only the embeddings of a random transformer. This compares the two kinds of solution *for the
same function*: MAJORITY and sparse XOR (both learned by both kinds of training at this scale), each
trained embedding-only and fully from the same initial weights and data stream for the same fixed
budget, and measured only where both fit the function on all 2^n strings. Sharpness perturbs only
the parameters the run trains (`sharpness_trainable`: Δ uniform on the sphere of radius ρ = 0.1 over
the trainable, non-positional parameters), so an embedding-only model's frozen layers stay as they
are; the Gaussian variant (`sharpness_gauss_trainable`) and the all-parameter sharpness are the
alternatives. Blowup is the paper's definition (Π_k max_w (1 + N_w)), the published one the
alternative. A seed is the independent unit; the two conditions of a seed are paired.

    learnability study run examples/embedding_sharpness.py               # quick: ~2 CPU-min (118 CPU-s measured)
    learnability study run examples/embedding_sharpness.py --scale tiny  # the test suite's smoke run
"""

from dataclasses import dataclass

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
    Series,
    Study,
    Sweep,
    Table,
    Units,
    above,
    metric,
    num,
    spread,
)  # fmt: skip


# -- plan: what each scale fixes -------------------------------------------------------------------
@dataclass(frozen=True)
class Params:
    n: int
    width: int  # d_model = d_ff
    functions: tuple[str, ...]  # trained: MAJORITY is the headline, sparse XOR the alternative
    seeds: tuple[
        int, ...
    ]  # a seed fixes the initial weights and the data stream of both conditions
    steps: int  # the fixed budget: every run trains exactly this many steps (no early stop)
    batch: int
    directions: int  # sharpness directions per model


PLANS = {
    "tiny": Plan("tiny", Params(5, 16, ("majority",), (0, 1, 2), 150, 64, 4),
                 {"*": "smoke test: width 16, MAJORITY only, 150 steps, 4 sharpness directions"}),
    "quick": Plan("quick", Params(7, 32, ("majority", "x1 ^ x3"), tuple(range(6)), 1500, 128, 16),
                  cost="about 2 CPU-minutes (118 CPU-s measured)"),
}  # fmt: skip
NAMES = {"majority": "MAJORITY", "x1 ^ x3": "sparse XOR x1⊕x3"}
RECIPES = {
    "embeddings": (1e-2, 0.0),
    "full": (1e-3, 0.1),
}  # (lr, weight decay), fixed on pilot seeds
CONDITIONS = {"embeddings": "embedding-only", "full": "fully trained"}
MEASURES = ["profile", "blowup", "sharpness_trainable", "sharpness_gauss_trainable", "sharpness",
            "param_norm_trainable"]  # fmt: skip


# -- sweeps: every function × both conditions × the seeds, a fixed budget ---------------------------
def sweeps(plan: Plan[Params]) -> list[Sweep]:
    p = plan.params
    base = {
        "task": {"name": "boolean", "n": p.n, "targets": "pm1", "mode": "online"},
        "model": dict(arch="boolean_transformer", d_model=p.width, d_ff=p.width, max_len=p.n),
        "train": dict(steps=p.steps, batch_size=p.batch, eval_every=100),
        "measure": MEASURES,
        "measure_batch": 2**p.n,  # every string
        "sharpness_directions": p.directions,
        "save_model": False,
    }
    zipped = {"train.freeze": list(RECIPES), "train.lr": [r[0] for r in RECIPES.values()],
              "train.weight_decay": [r[1] for r in RECIPES.values()]}  # fmt: skip
    return [Sweep("embedding_sharpness/runs", "train", base, {"task.function": list(p.functions)}, zip=zipped,
                  seeds=list(p.seeds), seed_also=["data_seed"])]  # fmt: skip


# -- evidence: log10 of the measure, per seed, where both conditions fit the function ----------------
def fitted(results, function: str) -> dict[str, dict[int, object]]:
    out: dict[str, dict[int, object]] = {c: {} for c in RECIPES}
    for r in results.of("runs"):
        if r.config["task"]["function"] == function and num(metric(r, "function_agreement")) >= 1.0:
            out[r.config["train"]["freeze"]][r.config["seed"]] = r
    return out


def compare(default_key: str):
    def evidence(results, choices) -> Evidence:
        f, key = choices["function"], choices.get("measure", default_key)
        if f not in results.params.functions:
            return Evidence(not_run=f"this scale does not train {NAMES[f]}")
        runs = fitted(results, f)
        seeds = sorted(runs["embeddings"].keys() & runs["full"].keys())
        total = sum(1 for r in results.of("runs") if r.config["task"]["function"] == f) // 2
        if not seeds:
            return Evidence(
                missing=f"no seed fits {NAMES[f]} in both conditions ({total} seeds run)"
            )
        obs = [Obs(s, num(metric(runs[c][s], key)), group=c) for s in seeds for c in RECIPES]
        params = {c: metric(runs[c][seeds[0]], "trainable_params") for c in RECIPES}
        notes = (f"{key} of {NAMES[f]}, n = {results.params.n}, {len(seeds)} of {total} seeds fit in both "
                 f"conditions; trainable parameters: embedding-only {params['embeddings']}, fully trained "
                 f"{params['full']}")  # fmt: skip
        return Evidence(obs, notes=notes)

    return evidence


# -- claims ----------------------------------------------------------------------------------------
def claims(plan: Plan[Params]) -> list[Claim]:
    p = plan.params
    function = Choice(
        "function", "majority", ("x1 ^ x3",), "the other function both kinds of training fit"
    )
    units = Units(
        "seed", 3, "a seed fixes the initial weights and the data stream of both conditions"
    )
    regime = Regime(claimed=f"2-layer, 2-head transformers of width {p.width} on n = {p.n} bits, functions both "
                    "kinds of training fit (this question's own regime)",
                    checked=f"width {p.width}, n = {p.n}, {p.steps} steps", inside=True,
                    needs="sensitive functions (PARITY) would need a width at which embedding-only training fits them")  # fmt: skip
    common = dict(units=units, regime=regime, replicate=("runs",),
                  paper_statement="Cross-paper: Hahn & Rofin (2024) — sensitive functions need sharp minima and "
                  "LayerNorm blowup; Zhong & Andreas (2024) — embedding-only training of random transformers.")  # fmt: skip
    return [
        Claim(slug="sharper", title="Embedding-only solutions are sharper",
              statement="Computing the same function, an embedding-only solution is at least twice as sharp "
              "over its trainable parameters as the fully trained one of the same seed.",
              evidence=compare("sharpness_trainable"),
              rule=Contrast("embeddings", "full", above(0.0, 0.3), "log10_ratio", "sharpness", CONDITIONS),
              control=Control("fully trained, same shape, data, initial weights and budget", group="full"),
              choices=(function, Choice("measure", "sharpness_trainable", ("sharpness_gauss_trainable", "sharpness"),
                                        "Gaussian Δ per trainable coordinate (ε = 0.02), or Δ over every "
                                        "non-positional parameter, frozen ones included")),
              **common),
        Claim(slug="larger-blowup", title="Embedding-only solutions blow up LayerNorm more",
              statement="Computing the same function, an embedding-only solution has a larger LayerNorm blowup "
              "(at least 1.26×) than the fully trained one of the same seed.",
              evidence=compare("blowup_paper"),
              rule=Contrast("embeddings", "full", above(0.0, 0.1), "log10_ratio", "blowup", CONDITIONS),
              control=Control("fully trained, same shape, data, initial weights and budget", group="full"),
              choices=(function, Choice("measure", "blowup_paper", ("blowup_published",),
                                        "the published code's blowup (E Π 1/std, gains and eps ignored)")),
              **common),
    ]  # fmt: skip


# -- exhibits: every measure by condition, per function ----------------------------------------------
SHOWN = {"sharpness_trainable": "sharpness (trainable, sphere)", "sharpness_gauss_trainable":
         "sharpness (trainable, Gaussian)", "sharpness": "sharpness (all parameters)",
         "blowup_paper": "blowup (paper)", "param_norm_trainable_ratio": "‖θ‖ / ‖θ₀‖ (trainable)"}  # fmt: skip


def exhibits(results, plan: Plan[Params]) -> list:
    p = plan.params
    rows, panels = [], []
    for f in p.functions:
        runs = fitted(results, f)
        for c in RECIPES:
            rs = list(runs[c].values())
            rows.append(
                [
                    NAMES[f],
                    CONDITIONS[c],
                    len(rs),
                    *(spread((metric(r, k) for r in rs), 4) for k in SHOWN),
                ]
            )
        seeds = sorted(runs["embeddings"].keys() & runs["full"].keys())
        xs, ys = (
            [num(metric(runs[c][s], "sharpness_trainable")) for s in seeds]
            for c in ("full", "embeddings")
        )
        series = [Series("one seed", xs, ys, kind="points")]
        if seeds:  # the diagonal: above it the embedding-only solution is the sharper
            ends = [min(xs + ys), max(xs + ys)]
            series.append(Series("equal sharpness", ends, ends, kind="dashed"))
        panels.append(Panel(NAMES[f], "fully trained: sharpness (trainable)", "embedding-only: sharpness (trainable)",
                            series=series, logx=bool(seeds), logy=bool(seeds), note="" if seeds else "no seed fits both"))  # fmt: skip
    table = Table("solutions that fit the function", ["function", "condition", "seeds", *SHOWN.values()], rows,
                  "mean [min–max] over the seeds whose model fits the function on all strings")  # fmt: skip
    caption = "Per seed, the embedding-only solution's sharpness against the fully trained one's (same seed)."
    return [Figure("sharpness_pairs", caption, panels), table]


STUDY = Study(
    name="embedding_sharpness",
    title="Sharpness and LayerNorm blowup of embedding-only solutions",
    paper="own question, after Hahn & Rofin (ACL 2024) and Zhong & Andreas (NeurIPS 2024)",
    protocol_note="Boolean transformer (2 layers, 2 heads, post-LN), ±1 targets, fresh batches, a fixed "
    "budget; embedding-only at lr 1e-2 (wd 0) against full training at lr 1e-3 (wd 0.1); measured where "
    "both fit the function; sharpness over the trainable parameters only.",
    plans=PLANS,
    sweeps=sweeps,
    claims=claims,
    exhibits=exhibits,
)
