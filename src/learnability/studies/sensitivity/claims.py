"""Study `sensitivity`, claims: sharpness, blowup and norm against n (Fig. 1, 5–8), the norm–blowup trade-off
(Fig. 2), the bound of §5 and Corollary 5; sharpness and blowup rising as PARITY is learned (Fig. 3), the bias
to low-sensitivity, flat solutions (Fig. 4), length generalisation (the project's own) and the scratchpad (§6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

# isort: off
from learnability.studies import (PRE_ENGINE, AllOf, Alternative, Choice, Claim, Contrast, Control, Mean, Plan,
                                   Rate, Regime, Revision, Rule, Trend, Units, above, below, pre_engine)  # fmt: skip
from learnability.studies.sensitivity import evidence as ev
from learnability.studies.sensitivity.evidence import CONTROLS, LABELS
from learnability.studies.sensitivity.plan import LEN_FIT, SensitivityParams
# isort: on

# fmt: off
STATE = Choice("state", "end of budget", ("fit+K", "fit"),
               "the end of the budget: every task at an n read at the same training step (the paper's fixed "
               "budget; the quick plan's is longer at the largest n, where PARITY fits late); 'fit+K': the same time "
               "since the fit in every run (K steps after it), but PARITY read near step 1,400 at n = 8 against "
               "controls near 300–400; 'fit': where an early-stopped run ends")
POOLED = "units=runs (pooled OLS)"
PRE_CHOICES = {"state": "fit", "filter": "fitted", "scale": "linear"}
PRE_WHY = (": early stop at MSE < 0.001, 'fitted' filter, linear slope over all runs; the engine compares "
           "slopes by the interval of their difference, not by point estimates")
PRE_FIT = {"state": "fit", "filter": "fitted"}  # the pre-engine reading of the runs
ACC = (0.0, 1.0)  # an accuracy's range
GEN_LABELS = {"learned": "the learned function", "completions": "random completions"}
REVISED = "2026-11-30"  # the first engine rules, revised after the first quick run
ROUND3 = "2026-12-01"  # revised on the reanalysis of issue 21 (docs/studies/sensitivity.md)
AT_BUDGET = ("read at the end of the fixed budget, a trend against n is confounded with the time since the fit "
             "(PARITY fitted at step 200 at n = 4 and 800–1,400 at n = 8; the norm shrinks and the blowup "
             "drifts after the fit): every run is now read K steps after its fit")


def earlier(rule: Any, version: int, date: str = REVISED) -> Any:
    """An earlier version of `rule`: the same rule, since revised."""
    return replace(rule, version=version, date=date)


def units_revision(rule: Rule, shared: str, **choices: Any) -> Revision:
    """The first engine rule, which counted runs as units although `shared` share their initial weights."""
    return Revision(rule, REVISED, "first engine rule, revised after the first quick run: it counted every run as a "
                    f"unit, but {shared} share their initial weights, so they are one unit (pseudo-replication)",
                    {"units": "run", **choices})


ROUND4 = "2026-12-03"  # controls matched in training time (issue 33)
AT_FIT_K = ("read K steps after each run's own fit, a contrast between tasks compared PARITY near step 1,400 (n = 8) "
            "with MAJORITY and FIRST near steps 300–400; every task's blowup drifts up ~0.1 decades per 1,000 steps "
            "after its fit, so the contrast partly measured training time: every task at an n is now read at the same "
            "step, the end of the budget (2,000 steps at n = 8)")


WELCH = ("; and its control differences compared as independent samples (Welch) although every task is trained "
         "from the same seeds: they are now paired on the shared seeds")


def matched(rule: Trend) -> tuple[Trend, Revision]:
    """The rule read at the matched training step with paired control differences (the current one, a
    version up) and its revision: the rule as it was, read K steps after each run's fit, Welch."""
    return (replace(rule, version=rule.version + 1, date=ROUND4),
            Revision(replace(rule, pair_controls=False), ROUND4, AT_FIT_K + WELCH, {"state": "fit+K"}))


def at_budget(rule: Trend) -> Revision:
    """The engine rule before the reanalysis: the same trend, read at the end of the fixed budget."""
    return Revision(earlier(rule, rule.version - 1), ROUND3, AT_BUDGET, {"state": "end of budget"})


def _trend(y: str, band: Any, version: int = 3, focus: str = "parity") -> Trend:
    return Trend(focus, band, x="n", y=y, controls=CONTROLS, control_band=band, labels=LABELS,
                 version=version, date=ROUND3)


def _pre_trend(y: str, controls: bool = True) -> Trend:
    """The pre-engine growth rule: PARITY's slope CI above 0 (pooled OLS), with controls its excess too."""
    band = above(-1e-9, 0.0)
    more: dict[str, Any] = {"controls": CONTROLS, "control_band": band} if controls else {}
    return Trend("parity", band, x="n", y=y, per_unit=False, labels=LABELS, version=1, date=PRE_ENGINE, **more)


def _share(group: str, lo: float, hi: float, what: str, version: int) -> Rate:
    return Rate(group, above(lo, hi), what=what, version=version, date=PRE_ENGINE)


# -- the rules in force outside the scaling sweep (earlier versions: `earlier`) ----------------------
BEYOND, PAD_ACC = "accuracy beyond the training lengths", "PARITY-bit accuracy"
RISE_MEAN = AllOf((Mean("sharpness", above(0.0, 0.04), what="log10(after / before)"),  # a rise ≥ ×1.1 matters
                   Mean("blowup", above(0.0, 0.04), what="log10(after / before)")), version=5, date=ROUND3)
ROUND5 = "2026-12-03"  # issue 34 (science round 4): rules written before any run on their fresh seeds
DRIFTED = "log10(fit level, post-fit drift removed / plateau)"
# v6: the same bands, the "after" level read at the fit with the run's own post-fit drift removed
RISE = AllOf((Mean("sharpness", above(0.0, 0.04), what=DRIFTED), Mean("blowup", above(0.0, 0.04), what=DRIFTED)),
             version=6, date=ROUND5)
MEAN_AFTER = {"after": "mean from alignment"}  # how rules v2–v5 read the after-level
GEN = Contrast("learned", "completions", below(-0.25, 0.0), what="as", labels=GEN_LABELS, version=3,
               date=REVISED)
FLAT = Contrast("completions", "learned", above(0.0, 0.05), kind_of="log10_ratio", what="refit sharpness",
                version=3, date=REVISED)
LENGTH_V4 = AllOf((Mean("majority", above(0.8, 0.9), what=BEYOND, labels=LABELS, bounds=ACC),
                   Contrast("parity", "majority", below(-0.15, -0.05), what=BEYOND, labels=LABELS, bounds=ACC)),
                  version=4, date=ROUND3)
# v5: FIRST (sensitivity 1, one position: no averaging) beside MAJORITY, the same band; only fitted runs read
LENGTH = AllOf((*LENGTH_V4.parts,
                Contrast("parity", "first", below(-0.15, -0.05), what=BEYOND, labels=LABELS, bounds=ACC)),
               version=5, date=ROUND5)
PARITY_ONLY = {"fitted": "parity only"}  # the v3–v4 filter: only PARITY's runs had to fit the training lengths
PAD = AllOf((Mean("scratchpad", above(0.8, 0.9), what=f"{PAD_ACC} (own outputs fed back)", bounds=ACC),
             Contrast("scratchpad", "plain", above(0.1, 0.2), what=PAD_ACC, bounds=ACC)), version=4, date=ROUND3)


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    p = plan.params
    ns = ", ".join(map(str, p.ns))
    steps = ", ".join(f"{p.budget_of(n):,} at n = {n}" for n in p.ns) if p.budget_at else f"{p.budget:,}"
    scaling_regime = Regime("n = 4–30, width 128, 10,000 steps at batch 1024 (Fig. 1, 5–8)", f"n = {ns}, width "
                            f"{p.d_model}, budget {steps} steps", p.d_model >= 128 and max(p.ns) >= 20, "the paper plan")
    units = Units("seed", min_per_cell=3, note="a seed draws the initial weights and the data; the same weights at every n and task")
    seeds = Units("seed", 3, "it draws the random function, its training strings and the initialisation; its sizes share them")
    control = Control("MAJORITY and FIRST, same sweep, state and filter", group="majority")
    lag = f"at the end of the budget ({steps} steps), the same training step for every task at an n"
    size = "log10(‖θ‖/‖θ₀‖·Blowup)"
    draws = (Choice("runs", "scaling and trade-off draws", ("trade-off draws only",)),) if p.tradeoff_draws >= 3 else ()
    focus = ((Choice("focus", "parity", ("sparse_half",), "sparse parity with k = ⌈n/2⌉ is also in scope"),)
             if "sparse_half" in p.tasks else ())
    both = Rate("both", above(0.25, 0.5), what="share of aligned runs in which sharpness and blowup both rose")
    holds = "share of PARITY runs at larger n that satisfy it"
    norm = Choice("norm", "relative", ("matrices",), "weight matrices only: LayerNorm gains (~11 of ~18 at init) and biases out")
    definition = Choice("definition", "paper", ("published",), "the published code's E_x Π max 1/std, last layer at the read-out only")

    def scaling(slug: str, title: str, statement: str, paper: str, evidence: Any, rule: Trend,
                choices: tuple[Choice, ...], *history: Revision, revised: Revision | None = None,
                pooled: bool = True, alternatives: tuple[Alternative, ...] = (), **kw: Any) -> Claim:
        """A claim on the scaling sweep, read in the state chosen (fit + K by default). Its history: the rule
        before the reanalysis (`revised`; default: the same rule read at the end of the budget), then `history`."""
        current, fit_k = matched(rule)
        alts: tuple[Alternative, ...] = (Alternative(POOLED, rule=replace(current, per_unit=False)),) if pooled else ()
        alts += (Alternative("controls=independent (Welch)", rule=replace(current, pair_controls=False)),)
        return Claim(slug=slug, title=title, statement=statement, paper_statement=paper, evidence=evidence,
                     rule=current, units=kw.pop("units", units), control=kw.pop("control", control),
                     choices=(STATE, *choices), alternatives=(*alts, *alternatives),
                     history=(fit_k, revised or at_budget(rule), *history), regime=scaling_regime,
                     replicate=("scaling",), **kw)

    return [
        # -- sharpness, blowup, norm and the trade-off against n ------------------------------------------
        scaling("sharpness-grows", "PARITY's sharpness grows with n",
                f"Read {lag}, the published (Gaussian) sharpness of converged PARITY models, in ±1 output units, "
                "grows with n faster than that of MAJORITY and FIRST models.",
                "Sharpness of transformers fitted to PARITY grows with the input length; for MAJORITY, FIRST and "
                "MEAN it stays flat and small (Fig. 1, 5–8).",
                ev.sharpness_growth, _trend("log10 sharpness (±1 units)", above(0.0, 0.01)),
                (Choice("sharpness", "gauss", ("sphere",), "the sphere variant (paper's L_ρ) at the same radius ε√P"),),
                pre_engine(_pre_trend("sharpness"), PRE_WHY, PRE_CHOICES), prior_sd=0.05),
        scaling("blowup-grows", "PARITY's LayerNorm blowup grows with n",
                f"Read {lag}, the LayerNorm blowup (paper definition) of converged PARITY models grows with n "
                "faster than that of MAJORITY and FIRST models.",
                "Fitting PARITY needs a LayerNorm blowup that grows with n; other functions stay flat (Theorem 4, "
                "Fig. 1, 5–8).",
                ev.blowup_growth, _trend("log10 Blowup", above(0.0, 0.01)), (definition,),
                pre_engine(_pre_trend("Blowup"), PRE_WHY, PRE_CHOICES), prior_sd=0.02),
        scaling("norm-grows", "PARITY's parameter norm (relative to initialisation) grows with n",
                f"Read {lag}, ‖θ‖/‖θ₀‖ (positional parameters excluded; θ₀ the run's own initialisation) of "
                "converged PARITY models grows with n faster than MAJORITY's and FIRST's. The theory requires norm "
                "*or* blowup to grow (see tradeoff-frontier).",
                "The parameter norm of transformers fitted to PARITY grows with n (Fig. 1).",
                ev.norm_growth, _trend("log10 ‖θ‖/‖θ₀‖", above(0.0, 0.004)), (norm,),
                pre_engine(_pre_trend("‖θ‖", controls=False), PRE_WHY + "; no control task",
                           {**PRE_CHOICES, "norm": "absolute"}), prior_sd=0.003),
        scaling("tradeoff-frontier", "Fitting PARITY needs a larger norm or blowup as n grows",
                f"Across seeds{' and random (lr, weight decay) draws' if p.tradeoff_draws else ''}, read {lag}, "
                "log10(‖θ‖/‖θ₀‖) + log10 Blowup of converged PARITY models — the frontier of norm against blowup — "
                "moves out with n faster than MAJORITY's and FIRST's. Not independent evidence: by construction its "
                "value is the sum of norm-grows' and blowup-grows' values on the same runs (so its slope is the sum of "
                "theirs); it restates them, and the headline counts it apart (not independent).",
                "Across learning rates and weight decays, PARITY solutions need a large parameter norm or a large "
                "LayerNorm blowup, and the frontier moves outward with n (Fig. 2).",
                ev.frontier, edge := _trend(size, above(0.0, 0.01)), (norm, definition, *draws),
                pre_engine(_pre_trend("log10(‖θ‖·Blowup)", controls=False), PRE_WHY + "; no control task",
                           {**PRE_FIT, "norm": "absolute", "runs": "trade-off draws only"}),
                units=Units("seed or trade-off draw", 3, "one seed (or (lr, wd, seed) draw) is used at every n and task"),
                alternatives=(Alternative("frontier=lower half per cell (runs nearest the origin; pooled OLS)",
                                          {"frontier": "lower half per cell"}, replace(edge, per_unit=False)),),
                prior_sd=0.02, restates=("norm-grows", "blowup-grows")),
        # -- the sharpness bound of §5 and Corollary 5 ---------------------------------------------------
        scaling("bound-radius", "The radius at which sharpness meets as(T)/(2n) shrinks with n",
                f"For converged PARITY models (as(T)/n does not vanish), read {lag}, the sphere radius ρ* at which "
                "L_ρ first reaches as(T)/(2n) shrinks as n grows, faster than the radius at which MAJORITY and FIRST "
                "models (out of scope: as/n → 0) reach the same level ½.",
                "lim_{ρ→0} liminf_{n→∞} L_ρ,n(T) ≥ liminf_{n→∞} as(T_θ)/(2n) − L·exp(−Ω(d)) (§5): sensitive "
                "transformers sit in sharp minima at every radius.",
                ev.bound, _trend("log10 ρ*", below(-0.02, 0.0), focus="focus"),
                (Choice("level", "PARITY's ½", ("own as(T)/(2n)",), "controls at their own (vanishing) bound instead"), *focus),
                pre_engine(_share("pooled", 0.5, 0.8, "share of models with L_ρ ≥ as(T)/(2n)", 1),
                           ": every function pooled at ρ = ε√P, Spearman ≥ 0.5 and ≥ 80% above the line; the engine "
                           "keeps the share (its Wilson interval), the Spearman part has no engine form",
                           {"statistic": "pre-engine", **PRE_FIT}),
                pooled=False, control=Control("MAJORITY and FIRST at PARITY's level ½, same sweep and filter", group="majority"),
                alternatives=(Alternative("statistic=L_ρ/(as(T)/2n) at ε√P", {"statistic": "ratio"},
                                          _trend("log10 L_ρ/(as/2n)", above(0.0, 0.02), focus="focus")),),
                prior_sd=0.03),
        scaling("corollary5", "Corollary 5: C·E[Blowup²] ≥ c·as(f)/√(n log n)",
                f"With C corrected for the 1/√d_h scaling and the LayerNorm gains, checked on trained PARITY models read {lag}: "
                "vacuous if it holds with constant 1 by decades in every one; its testable form: log10 C + log10 E[Blowup²] "
                "of converged PARITY models grows with n, faster than MAJORITY's and FIRST's.",
                "Corollary 5: a transformer computing f has C·E[Blowup(x)²] ≥ Ω(as(f)/√(n log n)): fitting PARITY needs "
                "growing blowup or weights.",
                ev.corollary, cor := _trend("log10 C·E[Blowup²]", above(0.0, 0.01), 4),
                (Choice("form", "inequality", ("growth",), "test only the growth with n"),
                 Choice("C", "scaled", ("unscaled",), "the pre-engine C (no 1/√d_h, no gains)")),
                pre_engine(_share("holds", 0.5, 0.9, holds, 1), " as first written: c fitted at the smallest n, "
                           "≥ 90% hold → reproduced, < 50% → not", {"form": "pre-engine", **PRE_FIT}),
                pre_engine(_share("holds", 0.5, 0.9, holds, 2), " after the data were seen: inconclusive when "
                           "log10 C·E[B]² scatters by more than 10× the right side's change (the power condition)",
                           {"form": "pre-engine+power", **PRE_FIT}),
                revised=Revision(earlier(cor, 3), ROUND3, "vacuity judged at initialisation (v3), on models that do "
                                 "not compute PARITY, and growth read at the end of the budget; now on the trained "
                                 "models, with the growth form's lack of power stated",
                                 {"vacuity": "initialisation", "state": "end of budget"}),
                pooled=False, prior_sd=0.3),
        # -- dynamics and generalisation -------------------------------------------------------------------
        Claim("dynamics-rise", "Sharpness and blowup rise as PARITY is learned",
            f"Training PARITY at n = {p.dyn_n} without early stop, the published (Gaussian) sharpness and "
            "the LayerNorm blowup on a fixed batch, at the first step with loss < 0.01 (the fit) with the run's own "
            "post-fit drift removed (the level there of the least-squares line through every measurement from the fit "
            "on), exceed their means over the plateau before it (loss ≥ 0.2), as in the paper's curves aligned at the "
            "loss drop: a rise by the fit, not the drift every fitted model shows under weight decay after it.",
            "During training on PARITY, sharpness and LayerNorm blowup increase as the loss falls (Fig. 3).",
            ev.dynamics, RISE,
            Units("seed", 3, "the weight decays of a seed share its initial weights and data"),
            Control("the same run: its plateau before the fit, and its own post-fit drift (removed)",
                    value="its own plateau (or initialisation); the drift is the post-fit trend of the same run"),
            choices=(Choice("reference", "plateau", ("initialisation",),
                            "the plateau is where the loss still sits near 0.25, after the first steps"),
                     definition, Choice("sharpness", "gauss", ("sphere",))),
            history=(Revision(RISE_MEAN, ROUND5, "the after-level averaged from the fit to the end of the run (v5): "
                              "it carries the post-fit drift (the blowup keeps rising under weight decay after any "
                              "fit), which made up most of the blowup half's rise (issue 34: 0.027 left of 0.08 "
                              "once it is removed, under the 0.04 edge); now read at the fit, the run's own post-fit "
                              "trend removed; judged on fresh seeds 500–514", MEAN_AFTER),
                     Revision(earlier(RISE_MEAN, 4), ROUND3, "against initialisation (v4): the Gaussian sharpness there (a mean loss increase "
                              "away from a minimum) is ≤ 0 in half the runs, so no ratio; the paper aligns the curves at the "
                              "loss drop", {"reference": "initialisation", **MEAN_AFTER}),
                units_revision(earlier(RISE_MEAN, 3), "the runs of a seed at its several weight decays",
                               reference="initialisation", **MEAN_AFTER),
                pre_engine(AllOf((both,), version=1, date=PRE_ENGINE), " as first written: the value at alignment "
                           "against the mean over the first quarter of the run, both rise in every aligned run",
                           {"reference": "first quarter", "after": "at alignment"}),
                pre_engine(AllOf((both,), version=2, date=PRE_ENGINE), " after the data were seen: the mean from "
                           "alignment on against the plateau", {"reference": "plateau", **MEAN_AFTER})),
            figure="dynamics", regime=Regime("PARITY at n = 25: a long plateau, then the loss drop (Fig. 3)",
                                             f"n = {p.dyn_n}", p.dyn_n >= 20, "n = 25 (the paper plan)"),
            replicate=("dynamics",), prior_sd=0.1,
        ),
        Claim("generalisation-low-sensitivity", "Transformers generalise to low-sensitivity functions",
            f"Trained on part of a random function's truth table (n = {p.gen_n}), the learned function "
            "(thresholded on all strings) has a lower average sensitivity than random completions of the same "
            "training data.",
            "A transformer trained on part of a random function's truth table learns a function "
            "of lower sensitivity than random completions of the same data (Fig. 4).",
            ev.generalisation, GEN, seeds,
            Control("random completions of the same training strings, per run", group="completions"),
            choices=(Choice("size", "all", ("smallest",), "only the smallest training set"),),
            history=(units_revision(earlier(GEN, 2), "the runs of a random function at its several training sizes"),
                pre_engine(_share("below-5th", 0.5, 0.8, "share of runs below the completions' 5th percentile", 1),
                           ": learned as below the 5th percentile in ≥ 80% of runs")),
            regime=Regime("a random function at n = 10 from 1/8–1/2 of its table", f"n = {p.gen_n}", True),
            replicate=("generalisation",), prior_sd=0.4,
        ),
        Claim("flatter-minima", "Low-sensitivity solutions sit in flatter minima",
            "A model refitted to the learned (low-sensitivity) function's full truth table has a lower "
            "published (Gaussian) sharpness than the same model refitted to random completions of the same "
            "training data.",
            "Refitting a transformer to the function it learned gives a flatter minimum than "
            "refitting it to random completions of the same data (Fig. 4).",
            ev.flatness, FLAT, seeds,
            Control("the refitted learned function of the same run", group="learned"),
            choices=(Choice("sharpness", "gauss", ("sphere",)),
                     Choice("refits", "fitted", ("all",), "refits that reach accuracy ≥ 0.99 on their table"),
                     Choice("size", "all", ("smallest",), "only the smallest training set")),
            history=(units_revision(earlier(FLAT, 2), "the runs of a random function at its several training sizes"),
                pre_engine(_share("flatter-all", 0.5, 0.8, "share of runs flatter than every refitted completion", 1),
                           ": flatter than every completion in ≥ 80% of runs (it used sphere sharpness at ρ = 0.1; "
                           "ε√P stands in here)", {"sharpness": "sphere"})),
            regime=Regime("a random function at n = 10 from 1/8–1/2 of its table", f"n = {p.gen_n}", True),
            replicate=("generalisation",), prior_sd=0.3,
        ),
        # -- length generalisation and the scratchpad (§6) -------------------------------------------------
        Claim("length-generalisation", "PARITY generalises in length worse than MAJORITY and FIRST",
            f"Trained on lengths {p.len_train[0]}–{p.len_train[1]} with a CLS "
            f"read-out and {p.len_positions[0]} positions (not invariant to permuting the bits), MAJORITY keeps "
            "its accuracy on longer strings, and PARITY falls below both low-sensitivity controls there: MAJORITY, "
            "which like PARITY is a function of all positions (the count of ones) but of low sensitivity, and FIRST "
            "(sensitivity 1, one position), whose drop is what extrapolating positions alone costs a function that "
            "fits its training lengths. Only runs "
            f"with accuracy ≥ {LEN_FIT} on their training lengths are read (every task): a run that never fitted "
            "them is refused, not read. The project's own extension.",
            "Hahn & Rofin (§6) argue that sensitive functions are hard to length-generalise; "
            "the paper has no length experiment.",
            ev.length, LENGTH,
            Units("seed", 3, "PARITY and MAJORITY runs of a seed share their initial weights"),
            Control("MAJORITY (low sensitivity, an average) and FIRST (low sensitivity, one position); same "
                    "read-out, positions, budget, seeds and fit filter", group="majority"),
            choices=(Choice("positions", p.len_positions[0], tuple(p.len_positions[1:]), "another scheme defined at every length"),
                     Choice("beyond", "every bucket beyond", ("farthest bucket",), "only the longest strings")),
            history=(Revision(LENGTH_V4, ROUND5, "MAJORITY the only control (v4): it generalises by averaging "
                              "(attention reads the share of ones at any length), so PARITY below it cannot separate "
                              "high sensitivity from not being an average (issue 34: FIRST, sensitivity 1, drops to "
                              "0.81–0.93 at lengths 10–12); and only PARITY's runs had to fit the training lengths. "
                              "Now FIRST too, every task's unfitted runs refused; judged on fresh seeds 400–405",
                              PARITY_ONLY),
                     Revision(earlier(LENGTH_V4, 3), ROUND3, "no positional encoding (v3): bidirectional attention and a CLS "
                              "read-out see a multiset, so MAJORITY (the share of ones, which attention averages at any "
                              "length) generalises by construction; distance-aware positions make it a test",
                         {"positions": "none", **PARITY_ONLY}),
                pre_engine(AllOf((Mean("parity-drop", above(0.1, 0.15)), Mean("majority-drop", below(0.1, 0.15)),
                                  Contrast("majority", "parity", above(0.05, 0.1))), version=1, date=PRE_ENGINE),
                           ", on sinusoidal positions (it read the last position): PARITY drops ≥ 0.15, MAJORITY "
                           "≤ 0.1, MAJORITY beats PARITY by ≥ 0.1", {"positions": "sinusoidal", "parity_runs": "all"}),
                Revision(earlier(LENGTH_V4, 2), REVISED, "first engine rule, revised after the first quick run: it "
                         "also counted PARITY runs that never fit their training lengths (all were at chance there, "
                         "0.50), for which chance beyond them says nothing about length generalisation",
                         {"parity_runs": "all", "positions": "none"})),
            figure="length", regime=Regime("the project's own extension (no paper regime)",
                          f"lengths {p.len_train[0]}–{p.len_train[1]}, {p.len_positions[0]} positions", True),
            replicate=("length",), prior_sd=0.1,
        ),
        Claim("scratchpad", "An autoregressive scratchpad makes PARITY learnable",
            f"At n = {p.pad_n}, where plain PARITY fails at this budget, a causal transformer that writes the prefix parities "
            "one at a time, fed its own outputs at test time, gets the PARITY bit right where the same-size plain model does not.",
            "Intermediate steps (a scratchpad of prefix parities) make each step a low-sensitivity function, so PARITY "
            "becomes learnable (§6; published code up to n = 1024).",
            ev.scratchpad, PAD,
            Units("seed", 3, "a seed draws the initial weights and the data"),
            Control("plain PARITY: same n, width, budget and test strings", group="plain"),
            choices=(Choice("n", "largest", ("all",), "also the scratchpad models at smaller n (plain only at the largest)"),
                     Choice("score", "final bit", ("every step",), "every prefix parity right, not only the last")),
            history=(Revision(earlier(PAD, 3), ROUND3, "averaged over n (v3), mixing n = 6, where plain PARITY is learned, "
                         "with n = 12, where it is at chance; judged now at the largest n", {"n": "all"}),
                units_revision(earlier(PAD, 2), "the runs of a seed at its several n", n="all"),
                pre_engine(AllOf((Mean("scratchpad", above(0.85, 0.9), bounds=ACC),
                                  Mean("plain", below(0.75, 0.8), bounds=ACC)), version=1, date=PRE_ENGINE),
                           ": scratchpad ≥ 0.9 and plain ≤ 0.75 at one n; it read the last position under teacher "
                           "forcing", {"decoding": "teacher-forced", "n": "largest"})),
            figure="scratchpad", regime=Regime("n up to 1024 (published code)", f"n = {p.pad_n}", True),
            replicate=("scratchpad",), prior_sd=0.05,
        ),
    ]
# fmt: on
