"""Study `sparse_xor`, claims: statement, evidence, rule, units, control, robustness alternatives and rule
history. Rules were fixed before the quick-scale run they judge (2026-11-30); the pre-engine rules (stop 9)
are kept as version 1 where the engine can express them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from learnability.studies import (
    AllOf,
    Alternative,
    BestFit,
    CensoredTrend,
    Choice,
    Claim,
    Contrast,
    Control,
    Mean,
    Plan,
    Rate,
    Regime,
    Revision,
    Trend,
    Units,
    above,
    below,
    no_control,
    pre_engine,
    within,
)
from learnability.studies.sparse_xor import evidence as ev
from learnability.studies.sparse_xor.plan import (
    KIND_LABELS,
    RIVALS,
    SEED_FRACTION,
    SUCCESS,
    SparseXorParams,
)

# fmt: off
LOSS = Choice("success_loss", SUCCESS.loss, (0.01,), "a stricter loss bar for success")
MASS = Choice("success_mass", SUCCESS.mass, (0.95,), "a stricter attention-mass bar for success")
# the pre-engine rules' transformer part: 2m* slope ≤ 0.25 over every d of the m sweep (not matched to the FFNN)
PRE_TRANSFORMER = Trend("transformer_all", below(0.25, 0.5), x="log10 d", y="log10 2m*", per_unit=False)
DRAWS = "draw (one seed at one d)"
TODAY = "2026-12-01"
ROUND5 = "2026-12-03"  # issue 34 (science round 4): rules written before any run on their fresh seeds
POLYLOG: dict[str, Callable[[np.ndarray], np.ndarray]] = {"polylog (ln d)^k": lambda d: np.log(np.log(d)),
                                                          "power d^α": np.log}


def _kind_contrasts(what: str, version: int = 2) -> AllOf:
    return AllOf(tuple(
        Contrast("softmax", k, above(0.25, 0.5), kind_of="rate", what=what, labels=KIND_LABELS) for k in RIVALS
    ), version=version, date=ROUND5 if version > 2 else "2026-11-30")


# kinds-many-steps before issue 34 read η on 1 point a decade; the same data's integer-log10 points give it again
COARSE_ETA = {"eta_grid": "1_per_decade"}


def _step_trend(half_width: float) -> Trend:
    return Trend("softmax", within(-half_width, half_width, 0.25), x="log10 d", y="log10 c_min", per_unit=False)


def _best_fit(group: str, version: int = 1) -> BestFit:
    return BestFit(group, "polylog (ln d)^k", POLYLOG, margin=4.0, x="d", y=f"ln m* ({group})", min_x=5, version=version)


def _ffnn_trend(version: int) -> Trend:
    return Trend("ffnn", above(0.5, 0.8), x="log10 d", y="log10 parameters", controls=("transformer",),
                 control_band=above(0.25, 0.5), per_unit=False, version=version, date=TODAY if version > 3 else "2026-11-30")


# ffnn v5 (issue 34): the minimal sizes themselves — the FFNN's width w* must not shrink with d (its dense layer's
# w*·(d+2)+1 parameters then grow at least as d^0.8), and w*·d must outgrow the transformer's m* by more than d^0.5
# (slope of log w* minus slope of log m* above −0.5, i.e. the parameter ratio's slope above 0.5, v4's bar)
FFNN_SIZES = {"ffnn": "FFNN minimal width w*", "transformer": "transformer's m*"}
OLD_Y = {"y": "parameters"}  # v1–v4 read parameters (FFNN w*·(d+2)+1, transformer 2m*) on widths ≥ 2


def _ffnn_width_trend() -> Trend:
    return Trend("ffnn", above(-0.5, -0.2), x="log10 d", y="log10 minimal size", controls=("transformer",),
                 control_band=above(-0.75, -0.5), per_unit=False, labels=FFNN_SIZES, version=5, date=ROUND5)


def _second_d(p: SparseXorParams) -> Choice:
    return Choice("d", p.kinds_d[0], p.kinds_d[1:], "the same comparison on other draws at a second d")


def claims(plan: Plan[SparseXorParams]) -> list[Claim]:
    p = plan.params
    d_lo, d_hi = min(p.one_step_d), max(p.one_step_d)
    span = f"d = 2^{round(np.log2(d_lo))}..2^{round(np.log2(d_hi))}"
    m_span = f"d = 2^6..2^{round(np.log2(max(p.m_d)))}"
    kinds_regime = Regime("no d, m or step budget given (Section 3.2)", f"d = {p.kinds_d}, m = ⌈log2(d)²/2⌉", True)
    return [
        Claim(
            slug="one-step",
            title="one softmax step learns sparse XOR",
            statement="One population gradient step from θ̃ = −θ, at a step size η = c*·d²·ln d with one constant "
            "c* for every d, makes each head put ≥ 0.9 of its weight on a distinct target and the population "
            "loss ≤ 0.05, for most draws (embeddings, initial θ, support), at every d. The details give success "
            "against c in units of d²·ln d at every grid point, not only at c*.",
            paper_statement="Theorem 2: with high probability one gradient step with η of order d²·ln d "
            "learns sparse XOR (loss ≈ 0 for every input, each head on one target).",
            evidence=ev.one_step,
            rule=Contrast("step", "init", above(0.5, 0.75), kind_of="rate", what="success rate",
                          labels={"step": "after one step", "init": "same draws before it"}, version=2),
            units=Units(DRAWS, min_per_cell=max(2, p.one_step_seeds // 4), note="judged on the seeds that did not choose c*"),
            control=Control("the same draws before the step (η = 0)", group="init"),
            choices=(Choice("eta", "one_c", ("per_d", "c=1", "c=10"), "choose the step size per d on the judged draws; "
                            "fix c at the theorem's order with constant 1 or 10, without calibration"),),
            history=(pre_engine(Rate("step", above(0.5, 0.8), what="success rate"), choices={"eta": "per_d"}),),
            figure="one_step",
            regime=Regime("d large enough, m ≥ C·polylog d, η = Θ(d²·ln d) with an unspecified constant",
                          f"{span}, m = ⌈log2(d)²/2⌉, c = η/(d²·ln d) on 10^{p.c_grid[0]:g}..10^{p.c_grid[1]:g}", False,
                          "d to 2^20 (the paper plan)"),
            replicate=("one_step",),
        ),
        Claim(
            slug="step-size",
            title="the smallest working step size scales as d²·ln d",
            statement="The smallest step size at which one step succeeds, in units of the theory's d²·ln d "
            "(c = η_min / (d²·ln d)), stays bounded across d: log10 c has a slope in log10 d within ±0.25 "
            "(a d^±0.5 change of order is excluded).",
            paper_statement="Theorem 2: the one-step size is of order d²·ln d.",
            evidence=ev.step_size,
            rule=_step_trend(0.25),
            units=Units(DRAWS, min_per_cell=4),
            control=no_control("c is the measured step size divided by the theory's d²·ln d; no matched null"),
            choices=(LOSS, MASS, Choice("d_min", 0, (1024,), "only the larger d (the asymptotic regime)")),
            figure="one_step",
            alternatives=(Alternative("band ±0.15", rule=_step_trend(0.15)),),
            regime=Regime("η = Θ(d²·ln d) as d grows", span, False, "d to 2^20 (the paper plan)"),
            replicate=("one_step",),
        ),
        Claim(
            slug="kinds-one-step",
            title="only softmax attention learns in one step",
            statement="On the same draws and step-size grid, one step succeeds far more often with softmax than "
            "with linear (s and s/d), erf (erf(s) and erf(s)/d) or sigmoid attention: for each rival the "
            "paired difference in success rate exceeds 0.5.",
            paper_statement="Section 3.2: linear and element-wise (erf) attention fail to specialise the heads.",
            evidence=ev.kinds_one_step,
            rule=_kind_contrasts("one-step success rate"),
            units=Units("draw (seed: the same embeddings, θ and support for every kind)", min_per_cell=8),
            control=Control("the other attention kinds on the same draws", group="linear"),
            choices=(_second_d(p),),
            history=(pre_engine(AllOf((Rate("softmax", above(0.5, 0.8)),
                                       *(Rate(k, below(0.2, 0.5)) for k in ("linear", "erf", "sigmoid")))),
                                choices={"eta": "shared"}),),
            figure="attention_kinds",
            regime=kinds_regime,
            replicate=("kinds",),
        ),
        Claim(
            slug="kinds-many-steps",
            title="the other attention kinds need many more steps",
            statement="Population gradient descent at each draw's best step size (η on 10^"
            f"{p.many_grid[0]:g}..10^{p.many_grid[1]:g} at {p.many_grid[2]:g} points a decade) succeeds within 10 "
            "steps (10× softmax's one) far more often with softmax than with any rival kind (paired difference in "
            "success rate > 0.5).",
            paper_statement="Section 3.2: linear and erf attention do not converge or need many more steps.",
            evidence=ev.kinds_many_steps,
            rule=_kind_contrasts("success rate within K steps", 3),
            units=Units("draw (seed)", min_per_cell=4, note=f"seeds {p.many_first_seed}–"
                        f"{p.many_first_seed + p.many_seeds - 1}, fresh at stop 32 (issue 34)"),
            control=Control("the other attention kinds on the same draws", group="linear"),
            choices=(Choice("within", 10, (), "how many steps count as 'not many more'"), _second_d(p)),
            history=(Revision(_kind_contrasts("success rate within K steps"), "2026-11-30", "η at 1 point a decade "
                              "(v2): can miss a kind's narrow working window (the reviewer: sigmoid's); read here on "
                              "the integer-log10 points of the same runs (issue 34)", COARSE_ETA),
                     pre_engine(AllOf(tuple(Rate(k, below(0.5, 0.75), what="success rate within 10 steps")
                                            for k in ("linear", "erf", "sigmoid"))), choices=COARSE_ETA),),
            figure="attention_kinds",
            regime=Regime(kinds_regime.claimed, f"{kinds_regime.checked}, {p.many_steps} population steps, η at "
                          f"{p.many_grid[2]:g} points a decade", True),
            replicate=("many_steps",),
        ),
        Claim(
            slug="polylog-m",
            title="m* grows polylogarithmically, not as a power of d",
            statement=f"The smallest m ≤ d at which one step succeeds in ≥ {SEED_FRACTION:.0%} of seeds (at one "
            f"shared step size, and at every larger m of the grid), for {m_span}, is fitted better by "
            "m* = A·(ln d)^k than by m* = A·d^α (AIC lower by more than 4) — under every m* analysis declared: "
            "seed fraction 0.75, 0.5 and 0.875, the first m reaching the fraction, and the loss bar 0.01.",
            paper_statement="Theorem 2: m = O(polylog d) suffices, so 2m = O(polylog d) trainable parameters.",
            evidence=ev.polylog_m,
            rule=AllOf(tuple(_best_fit(g) for g in ev.M_VARIANTS), version=3, date=TODAY),
            units=Units("d (m* pools its seeds)", min_per_cell=1, note="each d's m* comes from its own seeds"),
            control=Control("the rival power law fitted to the same m*"),
            choices=(Choice("step", "shared", ("per_draw",), "each draw's own best step size instead of one shared"),
                     Choice("d_min", 0, (1024,), "only d ≥ 2^10 (nearer the asymptotic regime)")),
            history=(Revision(_best_fit("transformer", 2), "2026-11-30", "one m* analysis (τ = 0.75, stays): decided "
                              "by a margin its declared alternatives did not all meet (issue 21)"),
                     pre_engine(Trend("transformer", below(0.25, 0.5), x="ln d", y="ln m*", per_unit=False),
                                ": power-law exponent over the upper half of d", {"fit": "upper_half"})),
            figure="min_m",
            regime=Regime("m = O(polylog d) as d → ∞", f"{m_span}, {p.m_seeds} seeds per d", False,
                          "d to 2^24 with 32 seeds per d (the paper plan)"),
        ),
        Claim(
            slug="samples",
            title="samples needed grow like d·polylog d, not d²",
            statement="The number of strings n* at which a finite-sample step (step size chosen on the training "
            "strings) succeeds and keeps succeeding grows with d with a log-log slope inside [0.8, 1.6] "
            "(d·polylog d over d = 16..1024; d² would give 2); draws that never succeed within the budget are "
            "kept as censored.",
            paper_statement="Corollary 3: n = Ω(d⁴·polylog d) suffices; the authors expect about O(d) in practice.",
            evidence=ev.samples,
            rule=CensoredTrend("softmax", within(0.8, 1.6, 0.2), x="log10 d", y="log10 n*", version=2),
            units=Units(DRAWS, min_per_cell=4),
            control=no_control("the references are the theory's d⁴·polylog d and the rival d²"),
            choices=(Choice("n_rule", "stable", ("first",), "the first success instead of the first stable one"),
                     Choice("population_failures", "excluded", ("censored",), "count population failures as censored"),
                     Choice("d_min", 0, (64,), "only d ≥ 64 (the local slope at the larger d)")),
            history=(pre_engine(Trend("softmax", within(0.5, 2.0, 0.5), x="log10 d", y="log10 n*", per_unit=False),
                                ": OLS on the draws that succeeded, censored draws dropped", {"censored": "drop"}),),
            figure="samples",
            regime=Regime("no range given (the authors expect about O(d) empirically)",
                          f"d = {min(p.samples_d)}..{max(p.samples_d)}, n ≤ 2^{p.n_max_log2}", False,
                          "d to 4096 with n ≤ 2^24 (the paper plan)"),
            replicate=("samples",),
        ),
        Claim(
            slug="ffnn",
            title="an FFNN needs parameters linear in d, the transformer far fewer",
            statement=f"On the same task and success bar (MSE ≤ {SUCCESS.loss} in ≥ {SEED_FRACTION:.0%} of seeds, every "
            "larger size too), the minimal width w* of a two-layer ReLU FFNN, searched at each d on the widths "
            + "/".join(map(str, p.ffnn_widths)) + ", does not shrink with d (log-log slope of w* above −0.2, so its "
            "dense layer's w*·(d+2)+1 parameters grow at least as d^0.8), and w*·d outgrows the transformer's m* at "
            "the same d: the slope of log w* minus that of log m* lies above −0.5 (the parameter ratio grows faster "
            "than d^0.5). A d where the grid does not bracket w* (every width succeeds, or none) is censored and "
            "leaves the claim inconclusive. Both axes are reported: the FFNN learns from at most "
            f"{p.ffnn_steps:,} × {p.ffnn_batch} online strings, the transformer's m* from the exact population "
            "gradient, and its finite-sample step's strings beside them.",
            paper_statement="FFNNs need Ω(d) parameters (their dense first layer); the transformer needs O(polylog d).",
            evidence=ev.ffnn,
            rule=_ffnn_width_trend(),
            units=Units("d (smallest size pools its seeds)", min_per_cell=1,
                        note=f"FFNN seeds {p.ffnn_first_seed}–{p.ffnn_first_seed + p.ffnn_seeds - 1}, fresh at stop 32 "
                        "(issue 34)"),
            control=Control("the transformer's m* at the same d, same loss bar and seed fraction", group="transformer"),
            choices=(Choice("fraction", SEED_FRACTION, (0.5,), "the fraction of seeds that must succeed"),
                     Choice("data", "population", ("finite_sample",), "the transformer learning from strings too: its "
                            "finite-sample step's m (m = ⌈log2(d)²/2⌉, learned within the ladder in the same fraction "
                            "of draws) instead of its population m*")),
            figure="ffnn",
            history=(
                Revision(_ffnn_trend(4), TODAY, "parameters at the smallest width (v4): their slope > 0.8 holds for "
                         "any constant width (≈ 0.97 from the dense layer alone), so the FFNN half was decided by the "
                         "architecture (issue 34); read here on widths ≥ 2, the grid it read", OLD_Y),
                Revision(_ffnn_trend(3), "2026-11-30", "m* read over every m of the grid, m > d included: "
                         "undefined at d = 16, where 38% of the draws fail at m = 64", {"m_cap": "none", **OLD_Y}),
                pre_engine(AllOf((Mean("ffnn", above(0.5, 1.0), what="the minimum parameters per input bit"),
                                  PRE_TRANSFORMER), version=2),
                           ", relaxed after results came in: ≥ 1 parameter per input bit and the transformer's 2m* "
                           "slope ≤ 0.25 — decided by the architecture", {"ffnn_rule": "per_bit", **OLD_Y}),
                pre_engine(AllOf((Trend("ffnn", above(0.3, 0.5), x="log10 d", y="log10 parameters", per_unit=False),
                                  PRE_TRANSFORMER), version=1),
                           " as first written, before its relaxation: the FFNN's log-log slope with its 95% CI above "
                           "0.5, and the transformer's 2m* slope ≤ 0.25 over all its d",
                           {"m_cap": "none", "all_d": True, **OLD_Y}),
            ),
            regime=Regime("any d (the FFNN's dense first layer)", f"d = {p.ffnn_d}, widths "
                          + "/".join(map(str, p.ffnn_widths)) + f", ≤ {p.ffnn_steps:,} Adam steps", True),
        ),
    ]
# fmt: on


__all__ = ["claims"]
