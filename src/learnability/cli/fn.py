"""`learnability fn`: define a Boolean function and measure it (sensitivity profile, Fourier degree).

learnability fn profile majority -n 11
learnability fn profile "x0 ^ x3 | maj(x1,x2,x4)" -n 5 --json
learnability fn profile parity -n 40 --samples 20000 --plot parity40.png
learnability fn list
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from learnability.cli.options import literal
from learnability.errors import UserError
from learnability.jsonsafe import json_safe
from learnability.lazy import lazy, lazy_names
from learnability.paths import atomic_path, check_output_file, claim_output_file, path_option

if TYPE_CHECKING:
    import numpy as np

    from learnability.boolean.analysis import SensitivityProfile, profile
    from learnability.boolean.functions import ZOO, resolve_function
else:  # imported when first used: `--help` and a usage error need none of them (learnability.lazy)
    np = lazy("numpy")
    SensitivityProfile, profile = lazy_names(
        "learnability.boolean.analysis", "SensitivityProfile", "profile"
    )
    ZOO, resolve_function = lazy_names("learnability.boolean.functions", "ZOO", "resolve_function")

# Declared limits of `fn profile --samples`: beyond them a run takes hours, so it is refused up front.
MAX_SAMPLES = 100_000_000
MAX_EVALUATIONS = 10_000_000_000  # samples × (n + 1) evaluations of the function
MAX_SEED = 2**63 - 1
_PROGRESS_FROM = 20_000_000  # evaluations: about a second or more, so a bar is worth showing

app = typer.Typer(
    help="Boolean functions: list the zoo, profile a function's sensitivity and Fourier spectrum.",
    no_args_is_help=True,
    add_completion=False,
)

_ZOO_HELP = {
    "parity": "x0 ⊕ … ⊕ x{n-1}; s ≡ n",
    "sparse_parity": "XOR over a support; params k, support=[..], seed; s ≡ k",
    "majority": "[Σx ≥ n/2], ties (even n) → 1",
    "first": "x_i (default i=0); param i; s ≡ 1",
    "dictator": "alias of first",
    "mean": "Σx / n — real-valued (not profiled)",
    "and": "all bits 1",
    "or": "any bit 1",
    "threshold": "[Σx ≥ t]; param t (default ⌈n/2⌉)",
    "random": "uniform random table; params seed, p",
}


@app.command("list")
def list_functions() -> None:
    """List the function zoo and the expression syntax."""
    table = Table(title="function zoo (use NAME or NAME:key=value,...)")
    table.add_column("name", style="bold")
    table.add_column("definition")
    for name in ZOO:
        table.add_row(name, _ZOO_HELP.get(name, ""))
    console = Console()
    console.print(table)
    console.print(
        "Expressions over x0..x{n-1}: ^ | & ~ not and or, ( ), 0/1, maj(..), parity(..)/xor(..), "
        "and(..), or(..), thr(t, ..). A truth-table file: a .npy array or a text file of 0/1 characters. "
        "Bit k of a table index is x_k."
    )


@app.command("profile")
def profile_command(
    spec: Annotated[
        str, typer.Argument(help="zoo name (e.g. sparse_parity:k=3,seed=1), expression, or file")
    ],
    n: Annotated[
        int | None, typer.Option("-n", "--n", help="number of input bits (inferred for a file)")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the profile as JSON")] = False,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="write a histogram of K_k to this image file", parser=path_option
        ),
    ] = None,
    samples: Annotated[
        int | None, typer.Option("--samples", help="Monte Carlo estimate from S strings")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed of the sampled strings")] = 0,
) -> None:
    """Sensitivity profile K_0..K_n, average/max sensitivity, K_0, influences and Fourier weights."""
    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise UserError(
            f"--samples {samples} is not allowed; give a number of strings from 1 to at most "
            f"{MAX_SAMPLES:,}"
        )
    if not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed {seed} is not allowed; a seed is an integer in 0..2^63-1")
    if plot is not None:
        _check_plot_path(plot)
    f = resolve_function(spec, n)
    if samples is not None and samples * (f.n + 1) > MAX_EVALUATIONS:
        raise UserError(
            f"--samples {samples} at n={f.n} needs {samples * (f.n + 1):,} evaluations of the "
            f"function; at most {MAX_EVALUATIONS:,} are allowed: give fewer samples"
        )
    with _SamplingProgress(samples, f.n) as progress:
        result = profile(f, samples=samples, seed=seed, progress=progress)
    if json_out:
        typer.echo(json.dumps(json_safe(result.to_dict(), "string"), indent=2, allow_nan=False))
    else:
        _print_profile(result)
    if plot is not None:
        _plot(result, plot)
        if not json_out:
            Console().print(literal(f"histogram written to {plot}"))


def _print_profile(p: SensitivityProfile) -> None:
    console = Console()
    kind = "exact" if p.exact else f"sampled, {p.samples} strings, {p.confidence:.0%} intervals"
    table = Table(title=literal(f"{p.name}  (n = {p.n}, {kind})"))  # (a file name may hold [...])
    table.add_column("k", justify="right")
    table.add_column("K_k" if p.exact else "fraction K_k/2^n", justify="right")
    table.add_column("K_k / 2^n" if p.exact else "interval", justify="right")
    if p.fourier_weights is not None:
        table.add_column("Fourier weight W_k", justify="right")
    hidden = 0
    for k in range(p.n + 1):
        if not p.exact and k > 0 and p.fractions[k] == 0:
            hidden += 1  # a sampled profile at large n would print dozens of empty rows
            continue
        if p.exact:
            assert p.counts is not None
            left, right = f"{int(p.counts[k]):,}", f"{p.fractions[k]:.6g}"
        else:
            assert p.fraction_ci is not None
            lo, hi = p.fraction_ci[k]
            left, right = f"{p.fractions[k]:.4g}", f"[{lo:.3g}, {hi:.3g}]"
        weight = f"{p.fourier_weights[k]:.6g}" if p.fourier_weights is not None else ""
        if p.exact and p.counts is not None and p.counts[k] == 0 and weight in ("0", ""):
            style = "dim"
        else:
            style = None
        cells = [str(k), left, right] + ([weight] if p.fourier_weights is not None else [])
        table.add_row(*map(literal, cells), style=style)
    console.print(table)
    if hidden:
        console.print(f"[dim]{hidden} values of k with no sampled string are not shown.[/]")
    average = f"{p.average:.6g}"
    if p.average_ci is not None:
        average += f"  [{p.average_ci[0]:.4g}, {p.average_ci[1]:.4g}]"
    console.print(f"average sensitivity as(f): [bold]{average}[/]")
    bound = "" if p.exact else " (largest seen: a lower bound)"
    console.print(f"max sensitivity: [bold]{p.max_sensitivity}[/]{bound}")
    if p.exact:
        console.print(f"zero-sensitivity strings K_0: [bold]{p.zero_count:,}[/]")
        console.print(f"Fourier degree: [bold]{p.degree}[/]")
    else:
        console.print(
            f"zero-sensitivity fraction K_0/2^n ≤ [bold]{p.zero_fraction_upper:.3g}[/] (upper bound)"
        )
    for note in p.notes:
        console.print(f"[dim]{literal(note)}[/]")


def _check_plot_path(path: Path) -> None:
    if path.suffix.lower() not in (".png", ".pdf", ".svg", ".jpg", ".jpeg"):
        raise UserError(f"--plot {str(path)!r}: the file must end in .png, .pdf, .svg or .jpg")
    try:
        missing = not path.parent.exists()
    except OSError:
        missing = False  # a name too long to look up: check_writable_file says so below
    if missing:
        raise UserError(f"--plot {str(path)!r}: folder {str(path.parent)!r} does not exist")
    check_output_file(path, "--plot")  # never over a file learnability did not write


class _SamplingProgress:
    """A progress bar (stdout, interactive terminals only) while a long Monte Carlo estimate runs."""

    def __init__(self, samples: int | None, n: int) -> None:
        self.bar: Any = None
        self.samples = samples
        long = samples is not None and samples * (n + 1) >= _PROGRESS_FROM
        if long and sys.stdout.isatty():
            self.bar = Progress(
                TextColumn("sampling"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                transient=True,
            )

    def __enter__(self) -> Callable[[int, int], None] | None:
        if self.bar is None:
            return None
        self.bar.start()
        task = self.bar.add_task("sampling", total=self.samples)
        return lambda done, total: self.bar.update(task, completed=done)

    def __exit__(self, *_: Any) -> None:
        if self.bar is not None:
            self.bar.stop()


def _plot(p: SensitivityProfile, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ks = range(p.n + 1)
    if p.fraction_ci is not None:
        err = np.clip(
            [p.fractions - p.fraction_ci[:, 0], p.fraction_ci[:, 1] - p.fractions], 0, None
        )
        ax.bar(ks, p.fractions, yerr=err, capsize=2, color="tab:blue")
    else:
        ax.bar(ks, p.fractions, color="tab:blue")
    ax.set_xlabel("sensitivity k")
    ax.set_ylabel("fraction of inputs K_k / 2^n")
    label = "exact" if p.exact else f"{p.samples} samples"
    # a '$' in a file's name would start matplotlib's math notation: drawn as typed instead
    ax.set_title(f"{p.name}, n = {p.n} ({label}); as = {p.average:.3g}".replace("$", r"\$"))
    fig.tight_layout()
    claim_output_file(path)
    with atomic_path(path) as tmp:  # the format from the real name: the temporary one ends .tmp
        fig.savefig(tmp, format=path.suffix.lower().lstrip(".").replace("jpg", "jpeg"))
    plt.close(fig)
