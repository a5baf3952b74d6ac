"""Study `sensitivity`, claims: what fitting a sensitive function does to the model — sharpness, LayerNorm
blowup and parameter norm against n (paper Fig. 1, 5–8), the norm–blowup trade-off (Fig. 2), the
sharpness bound of §5 and Corollary 5 — and what transformers learn: sharpness and blowup rising as
PARITY is learned (Fig. 3), the bias to low-sensitivity, flat solutions (Fig. 4), and the consequences
§6 discusses (length generalisation, the project's own extension; the autoregressive scratchpad)."""

from __future__ import annotations

from typing import Any

from learnability.studies import (
    PRE_ENGINE,
    AllOf,
    Alternative,
    Choice,
    Claim,
    Contrast,
    Control,
    Mean,
    Plan,
    Rate,
    Revision,
    Rule,
    Trend,
    Units,
    above,
    below,
    pre_engine,
)
from learnability.studies.sensitivity import evidence as ev
from learnability.studies.sensitivity.evidence import CONTROLS, FIT, LABELS
from learnability.studies.sensitivity.plan import SensitivityParams

# fmt: off
BUDGET = Choice("budget", "fixed", ("until_fit",),
                "stopping at the first fit (MSE < 0.001) ends runs before weight decay trades norm "
                "for blowup; the paper trains a fixed 10,000 steps")
FILTER = Choice("filter", "converged", ("fitted", "all"),
                "the paper keeps runs with final MSE < 0.001; the pre-engine study also kept runs "
                "with accuracy ≥ 0.99 ('fitted'); 'all' keeps every run")
POOLED = "units=runs (pooled OLS)"
PRE_CHOICES = {"budget": "until_fit", "filter": "fitted", "scale": "linear"}
PRE_WHY = (": early stop at MSE < 0.001, 'fitted' filter, linear slope over all runs; the engine compares "
           "slopes by the interval of their difference, not by point estimates")
PRE_FIT = {"budget": "until_fit", "filter": "fitted"}  # the pre-engine reading of the runs
GEN_LABELS = {"learned": "the learned function", "completions": "random completions"}
REVISED = "2026-11-30"  # the first engine rules, revised after the first quick run


def units_revision(rule: Rule, shared: str) -> Revision:
    """The first engine rule of a claim whose runs were counted as units although `shared` (e.g. "the
    runs of a seed at its several n") share their initial weights: evaluated with every run a unit."""
    return Revision(rule, REVISED, "first engine rule, revised after the first quick run: it counted every run as a "
                    f"unit, but {shared} share their initial weights, so they are one unit (pseudo-replication)",
                    {"units": "run"})


def _trend(y: str, band: Any, version: int = 2, **kw: Any) -> Trend:
    return Trend("parity", band, x="n", y=y, controls=CONTROLS, control_band=band, labels=LABELS,
                 version=version, **kw)


def _pooled(y: str, band: Any) -> Alternative:
    """The same trend with every run a unit and one OLS over all of them (the pre-engine analysis)."""
    return Alternative(POOLED, rule=_trend(y, band, per_unit=False))


def _pre_trend(y: str, controls: bool = True) -> Trend:
    """The pre-engine growth rule as the engine can state it: PARITY's slope CI above 0 (pooled OLS over
    runs) and, with controls, its excess over each control's slope above 0."""
    band = above(-1e-9, 0.0)
    if controls:
        return Trend("parity", band, x="n", y=y, controls=CONTROLS, control_band=band, per_unit=False,
                     labels=LABELS, version=1, date=PRE_ENGINE)
    return Trend("parity", band, x="n", y=y, per_unit=False, labels=LABELS, version=1, date=PRE_ENGINE)


def _rise_rule(version: int, date: str = REVISED) -> AllOf:
    band = above(0.0, 0.04)  # a rise of at least ×1.1 matters
    return AllOf((Mean("sharpness", band, what="log10(after / before)"),
                  Mean("blowup", band, what="log10(after / before)")), version=version, date=date)


def _gen_rule(version: int, date: str = REVISED) -> Contrast:
    return Contrast("learned", "completions", below(-0.25, 0.0), what="as", labels=GEN_LABELS, version=version,
                    date=date)


def _flat_rule(version: int, date: str = REVISED) -> Contrast:
    return Contrast("completions", "learned", above(0.0, 0.05), kind_of="log10_ratio", what="refit sharpness",
                    version=version, date=date)


def _length_rule(version: int, date: str) -> AllOf:
    beyond = "accuracy beyond the training lengths"
    return AllOf((Mean("majority", above(0.8, 0.9), what=beyond, labels=LABELS, bounds=(0.0, 1.0)),
                  Contrast("parity", "majority", below(-0.15, -0.05), what=beyond, labels=LABELS, bounds=(0.0, 1.0))),
                 version=version, date=date)


def _pad_rule(version: int, date: str = REVISED) -> AllOf:
    return AllOf((Mean("scratchpad", above(0.8, 0.9), what="PARITY-bit accuracy (own outputs fed back)", bounds=(0.0, 1.0)),
                  Contrast("scratchpad", "plain", above(0.1, 0.2), what="PARITY-bit accuracy", bounds=(0.0, 1.0))),
                 version=version, date=date)


def _share(group: str, lo: float, hi: float, what: str, version: int) -> Rate:
    return Rate(group, above(lo, hi), what=what, version=version, date=PRE_ENGINE)


def claims(plan: Plan[SensitivityParams]) -> list[Claim]:
    p = plan.params
    units = Units("seed", min_per_cell=3, note="the same initial weights at every n and task")
    functions = Units("random function", 3, "its training sizes share the weights and nested strings")
    control = Control("MAJORITY and FIRST, same sweep, budget and filter", group="majority")
    size = "log10(‖θ‖/‖θ₀‖·Blowup)"
    # fewer trade-off draws than the minimum units per cell: no power for a draws-only alternative
    runs_choice = (Choice("runs", "scaling and trade-off draws", ("trade-off draws only",)),) if p.tradeoff_draws >= 3 else ()
    focus = ((Choice("focus", "parity", ("sparse_half",), "sparse parity with k = ⌈n/2⌉ is also in scope"),)
             if "sparse_half" in p.tasks else ())
    both = Rate("both", above(0.25, 0.5), what="share of aligned runs in which sharpness and blowup both rose")
    holds = "share of PARITY runs at larger n that satisfy it"
    return [
        # -- sharpness, blowup, norm and the trade-off against n ------------------------------------------
        Claim(
            slug="sharpness-grows",
            title="PARITY's sharpness grows with n",
            statement="At the fixed training budget, the published (Gaussian) sharpness of converged PARITY "
            "models, in ±1 output units, grows with n faster than that of MAJORITY and FIRST models.",
            paper_statement="Sharpness of transformers fitted to PARITY grows with the input length; for "
            "MAJORITY, FIRST and MEAN it stays flat and small (Fig. 1, 5–8).",
            evidence=ev.sharpness_growth,
            rule=_trend("log10 sharpness (±1 units)", above(0.0, 0.01)),
            units=units,
            control=control,
            choices=(BUDGET, FILTER,
                     Choice("sharpness", "gaussian", ("sphere",), "the sphere variant (paper's L_ρ) at the same radius ε√P")),
            alternatives=(_pooled("log10 sharpness (±1 units)", above(0.0, 0.01)),),
            history=(pre_engine(_pre_trend("sharpness"), PRE_WHY, PRE_CHOICES),),
        ),
        Claim(
            slug="blowup-grows",
            title="PARITY's LayerNorm blowup grows with n",
            statement="At the fixed training budget, the LayerNorm blowup (paper definition) of converged "
            "PARITY models grows with n faster than that of MAJORITY and FIRST models.",
            paper_statement="Fitting PARITY needs a LayerNorm blowup that grows with n; other functions "
            "stay flat (Theorem 4, Fig. 1, 5–8).",
            evidence=ev.blowup_growth,
            rule=_trend("log10 Blowup", above(0.0, 0.01)),
            units=units,
            control=control,
            choices=(BUDGET, FILTER, Choice("definition", "paper", ("published",),
                                            "the published code's E_x Π max 1/std, last layer at the read-out only")),
            alternatives=(_pooled("log10 Blowup", above(0.0, 0.01)),),
            history=(pre_engine(_pre_trend("Blowup"), PRE_WHY, PRE_CHOICES),),
        ),
        Claim(
            slug="norm-grows",
            title="PARITY's parameter norm (relative to initialisation) grows with n",
            statement="At the fixed training budget, ‖θ‖/‖θ₀‖ (positional parameters excluded; θ₀ the "
            "run's own initialisation) of converged PARITY models grows with n faster than MAJORITY's and "
            "FIRST's. The theory requires norm *or* blowup to grow (see tradeoff-frontier).",
            paper_statement="The parameter norm of transformers fitted to PARITY grows with n (Fig. 1).",
            evidence=ev.norm_growth,
            rule=_trend("log10 ‖θ‖/‖θ₀‖", above(0.0, 0.004)),
            units=units,
            control=control,
            choices=(BUDGET, FILTER,
                     Choice("norm", "relative", ("absolute",), "LayerNorm gains alone give ~11 of ~18 at initialisation")),
            alternatives=(_pooled("log10 ‖θ‖/‖θ₀‖", above(0.0, 0.004)),),
            history=(pre_engine(_pre_trend("‖θ‖", controls=False), PRE_WHY + "; no control task",
                                {**PRE_CHOICES, "norm": "absolute"}),),
        ),
        Claim(
            slug="tradeoff-frontier",
            title="Fitting PARITY needs a larger norm or blowup as n grows",
            statement="Across seeds and random (lr, weight decay) draws, log10(‖θ‖/‖θ₀‖) + log10 Blowup of "
            "converged PARITY models — the frontier of norm against blowup — moves out with n faster than "
            "MAJORITY's and FIRST's.",
            paper_statement="Across learning rates and weight decays, PARITY solutions need a large parameter "
            "norm or a large LayerNorm blowup, and the frontier moves outward with n (Fig. 2).",
            evidence=ev.frontier,
            rule=_trend(size, above(0.0, 0.01)),
            units=Units("seed or trade-off draw", 3, "one (lr, wd, seed) draw is used at every n and task"),
            control=control,
            choices=(BUDGET, FILTER, Choice("norm", "relative", ("absolute",)), Choice("definition", "paper", ("published",)),
                     *runs_choice),
            alternatives=(
                _pooled(size, above(0.0, 0.01)),
                Alternative("frontier=lower half per cell (runs nearest the origin; pooled OLS)",
                            {"frontier": "lower half per cell"}, _trend(size, above(0.0, 0.01), per_unit=False)),
            ),
            history=(pre_engine(_pre_trend("log10(‖θ‖·Blowup)", controls=False), PRE_WHY + "; no control task",
                                {**PRE_FIT, "norm": "absolute", "runs": "trade-off draws only"}),),
        ),
        # -- the sharpness bound of §5 and Corollary 5 ---------------------------------------------------
        Claim(
            slug="bound-radius",
            title="The radius at which sharpness meets as(T)/(2n) shrinks with n",
            statement="For converged PARITY models (as(T)/n does not vanish), the sphere radius ρ* at which "
            "L_ρ first reaches as(T)/(2n) shrinks as n grows, faster than the radius at which MAJORITY and "
            "FIRST models (out of scope: as/n → 0) reach the same level ½.",
            paper_statement="lim_{ρ→0} liminf_{n→∞} L_ρ,n(T) ≥ liminf_{n→∞} as(T_θ)/(2n) − L·exp(−Ω(d)) (§5): "
            "sensitive transformers sit in sharp minima at every radius.",
            evidence=ev.bound,
            rule=Trend("focus", below(-0.02, 0.0), x="n", y="log10 ρ*", controls=CONTROLS, control_band=below(-0.02, 0.0),
                       labels=LABELS, version=2),
            units=units,
            control=Control("MAJORITY and FIRST at PARITY's level ½, same sweep and filter", group="majority"),
            choices=(BUDGET, FILTER,
                     Choice("level", "PARITY's ½", ("own as(T)/(2n)",), "controls at their own (vanishing) bound instead"),
                     *focus),
            alternatives=(Alternative("statistic=L_ρ/(as(T)/2n) at ε√P", {"statistic": "ratio"},
                                      Trend("focus", above(0.0, 0.02), x="n", y="log10 L_ρ/(as/2n)", controls=CONTROLS,
                                            control_band=above(0.0, 0.02), labels=LABELS)),),
            history=(pre_engine(_share("pooled", 0.5, 0.8, "share of models with L_ρ ≥ as(T)/(2n)", 1),
                                ": every function pooled at ρ = ε√P, Spearman ≥ 0.5 and ≥ 80% above the line; the "
                                "engine keeps the share (its Wilson interval), the Spearman part has no engine form",
                                {"statistic": "pre-engine", **PRE_FIT}),),
        ),
        Claim(
            slug="corollary5",
            title="Corollary 5: C·E[Blowup²] ≥ c·as(f)/√(n log n)",
            statement="With C corrected for the 1/√d_h attention scaling and the LayerNorm gains, the "
            "inequality is checked on PARITY; if it already holds at initialisation it is vacuous, and its "
            "testable form is that log10 C + log10 E[Blowup²] of converged PARITY models grows with n, "
            "faster than MAJORITY's and FIRST's.",
            paper_statement="Corollary 5: a transformer computing f has C·E[Blowup(x)²] ≥ Ω(as(f)/√(n log n)): "
            "fitting PARITY needs growing blowup or weights.",
            evidence=ev.corollary,
            rule=_trend("log10 C·E[Blowup²]", above(0.0, 0.01), version=3),
            units=units,
            control=control,
            choices=(Choice("form", "inequality", ("growth",), "test only the growth with n"), BUDGET, FILTER,
                     Choice("C", "scaled", ("unscaled",), "the pre-engine C (no 1/√d_h, no gains)")),
            history=(
                pre_engine(_share("holds", 0.5, 0.9, holds, 1), " as first written: c fitted at the smallest n, "
                           "≥ 90% hold → reproduced, < 50% → not", {"form": "pre-engine", **PRE_FIT}),
                pre_engine(_share("holds", 0.5, 0.9, holds, 2), " after the data were seen: inconclusive when "
                           "log10 C·E[B]² scatters by more than 10× the right side's change (the power condition)",
                           {"form": "pre-engine+power", **PRE_FIT}),
            ),
        ),
        # -- dynamics and generalisation -------------------------------------------------------------------
        Claim(
            slug="dynamics-rise",
            title="Sharpness and blowup rise as PARITY is learned",
            statement=f"Training PARITY at n = {p.dyn_n} without early stop, the published (Gaussian) sharpness "
            "and the LayerNorm blowup on a fixed batch, averaged from the first step with loss < 0.01 on, "
            "exceed their values at initialisation.",
            paper_statement="During training on PARITY, sharpness and LayerNorm blowup increase as the loss "
            "falls (Fig. 3).",
            evidence=ev.dynamics,
            rule=_rise_rule(4),
            units=Units("seed", 3, "the weight decays of a seed share its initial weights and data"),
            control=Control("the same run before it fits", value="its reference point (initialisation or plateau)"),
            choices=(Choice("reference", "initialisation", ("plateau",),
                            "the plateau is where the loss still sits near 0.25, after the first steps"),
                     Choice("sharpness", "gaussian", ("sphere",))),
            history=(
                units_revision(_rise_rule(3), "the runs of a seed at its several weight decays"),
                pre_engine(AllOf((both,), version=1, date=PRE_ENGINE), " as first written: the value at alignment "
                           "against the mean over the first quarter of the run, both rise in every aligned run",
                           {"reference": "first quarter", "after": "at alignment"}),
                pre_engine(AllOf((both,), version=2, date=PRE_ENGINE), " after the data were seen: the mean from "
                           "alignment on against the plateau", {"reference": "plateau"}),
            ),
        ),
        Claim(
            slug="generalisation-low-sensitivity",
            title="Transformers generalise to low-sensitivity functions",
            statement=f"Trained on part of a random function's truth table (n = {p.gen_n}), the learned function "
            "(thresholded on all strings) has a lower average sensitivity than random completions of the "
            "same training data.",
            paper_statement="A transformer trained on part of a random function's truth table learns a function "
            "of lower sensitivity than random completions of the same data (Fig. 4).",
            evidence=ev.generalisation,
            rule=_gen_rule(3),
            units=functions,
            control=Control("random completions of the same training strings, per run", group="completions"),
            choices=(Choice("filter", "fit", ("all",), "runs that fit ≥ 95% of their training strings"),),
            history=(
                units_revision(_gen_rule(2), "the runs of a random function at its several training sizes"),
                pre_engine(_share("below-5th", 0.5, 0.8, "share of runs below the completions' 5th percentile", 1),
                           ": learned as below the 5th percentile in ≥ 80% of runs"),
            ),
        ),
        Claim(
            slug="flatter-minima",
            title="Low-sensitivity solutions sit in flatter minima",
            statement="A model refitted to the learned (low-sensitivity) function's full truth table has a "
            "lower published (Gaussian) sharpness than the same model refitted to random completions of the "
            "same training data.",
            paper_statement="Refitting a transformer to the function it learned gives a flatter minimum than "
            "refitting it to random completions of the same data (Fig. 4).",
            evidence=ev.flatness,
            rule=_flat_rule(3),
            units=functions,
            control=Control("the refitted learned function of the same run", group="learned"),
            choices=(Choice("sharpness", "gaussian", ("sphere",)),
                     Choice("refits", "fitted", ("all",), "refits that reach accuracy ≥ 0.99 on their table")),
            history=(
                units_revision(_flat_rule(2), "the runs of a random function at its several training sizes"),
                pre_engine(_share("flatter-all", 0.5, 0.8, "share of runs flatter than every refitted completion", 1),
                           ": flatter than every completion in ≥ 80% of runs (it used sphere sharpness at ρ = 0.1; "
                           "ε√P stands in here)", {"sharpness": "sphere"}),
            ),
        ),
        # -- length generalisation and the scratchpad (§6) -------------------------------------------------
        Claim(
            slug="length-generalisation",
            title="PARITY does not generalise in length; MAJORITY does",
            statement=f"Trained on lengths {p.len_train[0]}–{p.len_train[1]} with a {p.len_readout.upper()} "
            f"read-out and no positional encoding, MAJORITY keeps its accuracy on longer strings, and "
            "PARITY models that fit the training lengths fall below MAJORITY there. The project's own "
            "extension.",
            paper_statement="Hahn & Rofin (§6) argue that sensitive functions are hard to length-generalise; "
            "the paper has no length experiment.",
            evidence=ev.length,
            rule=_length_rule(3, REVISED),
            units=Units("seed", 3, "PARITY and MAJORITY runs of a seed share their initial weights"),
            control=Control("MAJORITY (low sensitivity), same read-out, positions and budget", group="majority"),
            choices=(Choice("positions", p.len_positions[0], tuple(p.len_positions[1:]), "encodings defined at every length"),
                     Choice("parity_runs", FIT, ("all",), "also PARITY runs that never fit the training lengths")),
            history=(
                pre_engine(AllOf((Mean("parity-drop", above(0.1, 0.15)), Mean("majority-drop", below(0.1, 0.15)),
                                  Contrast("majority", "parity", above(0.05, 0.1))), version=1, date=PRE_ENGINE),
                           ", on sinusoidal positions (it read the last position): PARITY drops ≥ 0.15, MAJORITY "
                           "≤ 0.1, MAJORITY beats PARITY by ≥ 0.1", {"positions": "sinusoidal", "parity_runs": "all"}),
                Revision(_length_rule(2, REVISED), REVISED, "first engine rule, revised after the first quick run: it "
                         "also counted PARITY runs that never fit their training lengths (all were at chance there, "
                         "0.50), for which chance beyond them says nothing about length generalisation",
                         {"parity_runs": "all"}),
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
            evidence=ev.scratchpad,
            rule=_pad_rule(3),
            units=Units("seed", 3, "a seed's runs at every n share its initial weights: averaged over n"),
            control=Control("plain PARITY: same width, budget and test strings", group="plain"),
            choices=(Choice("decoding", "autoregressive", ("teacher-forced",),
                            "the last step given the true prefix (dense supervision only)"),
                     Choice("n", "all", ("largest",))),
            history=(
                units_revision(_pad_rule(2), "the runs of a seed at its several n"),
                pre_engine(AllOf((Mean("scratchpad", above(0.85, 0.9), bounds=(0.0, 1.0)),
                                  Mean("plain", below(0.75, 0.8), bounds=(0.0, 1.0))), version=1, date=PRE_ENGINE),
                           ": scratchpad ≥ 0.9 and plain ≤ 0.75 at one n; it read the last position under teacher "
                           "forcing", {"decoding": "teacher-forced", "n": "largest"}),
            ),
        ),
    ]
# fmt: on


__all__ = ["BUDGET", "FILTER", "POOLED", "claims"]
