"""Draw `panels.Figure`s with matplotlib (headless) and save each as PNG and PDF.

The only module that draws: studies and claims describe figures as data (`learnability.report.panels`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from learnability.report.panels import Figure, Panel, Series

PANEL_WIDTH, PANEL_HEIGHT = 4.4, 3.3


@dataclass
class FigureFile:
    name: str
    caption: str
    png: Path
    pdf: Path


def save(figure: Figure, out_dir: Path, prefix: str) -> FigureFile:
    """Render `figure` to `out_dir/{prefix}_{name}.png|pdf`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n = max(1, len(figure.panels))
    ncols = figure.ncols or min(n, 3)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(PANEL_WIDTH * ncols, PANEL_HEIGHT * nrows), squeeze=False
    )
    flat = list(axes.ravel())
    for ax, panel in zip(flat, figure.panels):
        draw(ax, panel)
    for ax in flat[len(figure.panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    stem = f"{prefix}_{figure.name}"
    png, pdf = out_dir / f"{stem}.png", out_dir / f"{stem}.pdf"
    fig.savefig(png, dpi=130, bbox_inches="tight")
    fig.savefig(pdf, bbox_inches="tight")
    plt.close(fig)
    return FigureFile(figure.name, figure.caption, png, pdf)


def save_as(figure: Figure, path: Path, xcategories: list[str] | None = None) -> Path:
    """Render `figure` to one file, `path` (.png or .pdf by its suffix); `xcategories` labels the x
    positions 0, 1, ... of a figure whose x is categorical (`learnability plot`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".pdf"):
        raise ValueError(f"cannot render to {path.name!r}: give a .png or .pdf file")
    n = max(1, len(figure.panels))
    ncols = figure.ncols or min(n, 3)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(PANEL_WIDTH * ncols, PANEL_HEIGHT * nrows), squeeze=False
    )
    flat = list(axes.ravel())
    for ax, panel in zip(flat, figure.panels):
        draw(ax, panel)
        if xcategories is not None:
            ax.set_xticks(range(len(xcategories)), xcategories, fontsize=7)
    for ax in flat[len(figure.panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight", format=suffix[1:])
    plt.close(fig)
    return path


def draw(ax: Any, panel: Panel) -> None:
    categorical = any(not _numeric(s.x) for s in panel.series)
    for i, s in enumerate(panel.series):
        _draw_series(ax, s, i, len(panel.series), categorical)
    for h in panel.histograms:
        values = np.asarray(h.values, dtype=float)
        values = values[np.isfinite(values)]
        if values.size:
            ax.hist(
                values,
                bins=h.bins,
                density=h.density,
                histtype="step",
                linewidth=1.4,
                label=h.label,
            )
    if panel.matrix is not None:
        image = ax.imshow(
            np.asarray(panel.matrix.values, dtype=float), aspect="auto", cmap="viridis",
            interpolation="nearest",
        )  # fmt: skip
        bar = ax.figure.colorbar(image, ax=ax)
        if panel.matrix.colorbar:
            bar.set_label(panel.matrix.colorbar)
        if panel.matrix.xticklabels is not None:
            ax.set_xticks(
                range(len(panel.matrix.xticklabels)), panel.matrix.xticklabels, fontsize=7
            )
        if panel.matrix.yticklabels is not None:
            ax.set_yticks(
                range(len(panel.matrix.yticklabels)), panel.matrix.yticklabels, fontsize=7
            )
    for y, label in panel.hlines:
        ax.axhline(y, color="grey", linestyle=":", linewidth=1, label=label or None)
    for x, label in panel.vlines:
        ax.axvline(x, color="grey", linestyle="--", linewidth=1, label=label or None)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=10)
    if panel.logx:
        ax.set_xscale("log")
    if panel.logy:
        ax.set_yscale("log")
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    if panel.xticks is not None:
        ax.minorticks_off()
        labels = None
        if categorical and panel.series and all(s.kind == "bar" for s in panel.series):
            labels = [s.label or "" for s in panel.series]
        ax.set_xticks(
            panel.xticks, labels if labels else [_tick(t) for t in panel.xticks], fontsize=7
        )
    if panel.note:
        ax.text(
            0.5,
            0.5,
            panel.note,
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="#555",
        )
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, frameon=False)


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _tick(value: float) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _draw_series(ax: Any, s: Series, index: int, count: int, categorical: bool) -> None:
    x = (
        np.arange(len(s.x), dtype=float)
        if categorical and s.kind != "bar"
        else np.asarray(s.x, dtype=float)
    )
    y = np.asarray([math.nan if v is None else v for v in s.y], dtype=float)
    lo = (
        None
        if s.lo is None
        else np.asarray([math.nan if v is None else v for v in s.lo], dtype=float)
    )
    hi = (
        None
        if s.hi is None
        else np.asarray([math.nan if v is None else v for v in s.hi], dtype=float)
    )
    kw: dict[str, Any] = {"label": s.label}
    if s.color:
        kw["color"] = s.color
    if s.kind == "bar":
        err = None
        if lo is not None and hi is not None:
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
        ax.bar(x, y, yerr=err, capsize=3, alpha=0.8, **kw)
        return
    if s.kind == "points":
        if lo is not None and hi is not None:
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
            ax.errorbar(x, y, yerr=err, fmt="o", ms=3.5, capsize=2, **kw)
        else:
            ax.plot(x, y, "o", ms=3.5, alpha=0.8, **kw)
        return
    style = {"line": "-", "dashed": "--", "step": "-"}[s.kind]
    if s.kind == "step":
        (line,) = ax.step(x, y, where="mid", linestyle=style, **kw)
    else:
        (line,) = ax.plot(
            x, y, linestyle=style, marker="o" if s.kind == "line" else None, ms=3.5, **kw
        )
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)


__all__ = ["FigureFile", "draw", "save", "save_as"]
