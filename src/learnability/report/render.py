"""Draw `panels.Figure`s with matplotlib (headless) and save each as PNG and PDF.

The only module that draws: studies and claims describe figures as data (`learnability.report.panels`).

Every panel has the same size (`PANEL_WIDTH` × `PANEL_HEIGHT` inches) and every text the same few
sizes, so a figure of k columns is k panels wide and the report shows it at k/3 of the page width:
panels look alike across figures, and the smallest text stays legible down to an 800-px window
(`report.html` checks this in a real browser: `MIN_TEXT_PT` scaled by the displayed width). Legends
sit below their panel, never over the data, and add their height to the figure (a panel keeps its
size however long its legend); tick labels that would overlap are thinned (log axes), category names
are wrapped. Every labelled series of a panel has its own style (colour, then line style and marker),
one label one style across a figure's panels; a measured line joins measured points only: it breaks
where the panel's x grid (its categories, its ticks, or its series' few x values) has an x it lacks.
"""

from __future__ import annotations

import math
import struct
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, NullFormatter
from matplotlib.transforms import ScaledTranslation

from learnability.paths import atomic_path
from learnability.report.panels import Figure, Panel, Ref, Series

PANEL_WIDTH, PANEL_HEIGHT = 3.3, 2.75  # inches per panel, before legends below it
DPI = 160
TEXT_PT = 12.0  # ticks, legends, notes: the smallest text in a figure
LABEL_PT, TITLE_PT = 12.5, 13.0
MAX_COLUMNS = 3  # the report's page is three panels wide
# two lines of one dash pattern and marker look alike when their colours are less than this apart
# (RGB), or both grey
ALIKE = 0.25
GRID_MAX = 25  # at most this many distinct x: a design's grid, where a line breaks at an x it lacks
_STYLE: Any = {  # a dict of rcParams (typed Any: matplotlib types each key)
    "font.size": TEXT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": LABEL_PT,
    "xtick.labelsize": TEXT_PT,
    "ytick.labelsize": TEXT_PT,
    "legend.fontsize": TEXT_PT,
    "legend.title_fontsize": TEXT_PT,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
}
_REF_STYLE: dict[str, dict[str, Any]] = {
    "reference": {"color": "#555555", "linestyle": ":", "linewidth": 1.3},
    "chance": {"color": "#555555", "linestyle": ":", "linewidth": 1.6},
    "control": {"color": "#d9730d", "linestyle": "--", "linewidth": 1.5},
    "band": {"color": "#b3261e", "linestyle": "-.", "linewidth": 1.2},
    "baseline": {"color": "#1f5fbf", "linestyle": "--", "linewidth": 1.4},
}
_SPAN_COLOR = {"band": "#b3261e", "control": "#d9730d", "chance": "#777777"}


@dataclass
class FigureFile:
    """A rendered figure: its files and what the report needs to show it at a legible size."""

    name: str
    caption: str
    png: Path
    pdf: Path
    columns: int = 1  # panels a row: the report's display width is columns / MAX_COLUMNS
    panels: int = 1
    dpi: int = DPI
    width_px: int = 0  # the PNG's size
    height_px: int = 0
    min_text_pt: float = TEXT_PT  # the smallest font drawn, at the figure's own size
    claims: tuple[str, ...] = ()  # slugs of claims the figure declares it supports

    @property
    def width_in(self) -> float:
        return self.width_px / self.dpi if self.width_px else PANEL_WIDTH * self.columns


def save(figure: Figure, out_dir: Path, prefix: str) -> FigureFile:
    """Render `figure` to `out_dir/{prefix}_{name}.png|pdf`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{prefix}_{figure.name}"
    png, pdf = out_dir / f"{stem}.png", out_dir / f"{stem}.pdf"
    fig, columns = build(figure)
    try:
        # each file atomically: a kill or a full disk never leaves a truncated figure
        with atomic_path(png) as tmp:
            fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.05)
        with atomic_path(pdf) as tmp:
            fig.savefig(tmp, format="pdf", bbox_inches="tight", pad_inches=0.05)
        smallest = smallest_text(fig)
    finally:
        plt.close(fig)
    width, height = _png_size(png)
    return FigureFile(
        figure.name, figure.caption, png, pdf, columns=columns, panels=len(figure.panels),
        dpi=DPI, width_px=width, height_px=height, min_text_pt=smallest,
        claims=tuple(figure.claims),
    )  # fmt: skip


def save_as(figure: Figure, path: Path, xcategories: list[str] | None = None) -> Path:
    """Render `figure` to one file, `path` (.png or .pdf by its suffix); `xcategories` labels the x
    positions 0, 1, ... of a figure whose x is categorical (`learnability plot`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".pdf"):
        raise ValueError(f"cannot render to {path.name!r}: give a .png or .pdf file")
    fig, _ = build(figure)
    try:
        if xcategories is not None:
            for ax in fig.axes[: len(figure.panels)]:
                ax.set_xticks(range(len(xcategories)), [_wrap(c, 12) for c in xcategories])
        with atomic_path(path) as tmp:  # a kill or a full disk never leaves a truncated figure
            fig.savefig(tmp, dpi=DPI, bbox_inches="tight", pad_inches=0.05, format=suffix[1:])
    finally:
        plt.close(fig)
    return path


def build(figure: Figure) -> tuple[Any, int]:
    """The laid-out matplotlib figure (close it when done) and how many panel columns it spans."""
    n = max(1, len(figure.panels))
    ncols = max(1, min(figure.ncols or MAX_COLUMNS, n, MAX_COLUMNS))
    nrows = math.ceil(n / ncols)
    with plt.rc_context(_STYLE):
        fig = plt.figure(figsize=(PANEL_WIDTH * ncols, PANEL_HEIGHT * nrows), layout="constrained")
        flat = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
        used = flat[: len(figure.panels)]
        styles = Styles()
        for ax, panel in zip(used, figure.panels):
            draw(ax, panel, styles)
        for ax in flat[len(figure.panels) :]:
            ax.set_visible(False)
        for ax in used:
            _log_minor_labels(ax)
        shared, below = _shared_legend(fig, used, ncols)
        legend = used[0].get_legend() if used else None
        right = n == 1 and legend is not None
        renderer = _renderer(fig)
        if right and legend is not None:
            # one panel: its legend goes to the right, its title across the figure (fewer lines,
            # more height for the data), and the figure shows two columns wide
            tall = legend.get_window_extent(renderer).height / fig.dpi
            fig.set_size_inches(PANEL_WIDTH * 2, max(PANEL_HEIGHT * 1.15, tall + 0.5))
            title = figure.panels[0].title
            if title:
                used[0].set_title("")
                fig.suptitle(_wrap(title, 64), fontsize=TITLE_PT)
            legend.set_loc("upper left")
            legend.set_bbox_to_anchor((1.03, 1.0), transform=used[0].transAxes)
            ncols = 2
        elif below is not None:
            # the legend under the figure adds its height: the panels keep theirs
            width, height = fig.get_size_inches()
            extra = below.get_window_extent(renderer).height / fig.dpi
            fig.set_size_inches(width, height + extra + 0.1)
        # the layout pass lays out the panels alone: a panel's legend, taller than its panel before it
        # moves below it, must not squash the panel (it is laid out again, below, when saved)
        moving = [] if right else [ax.get_legend() for ax in used if ax.get_legend() is not None]
        for item in moving:
            item.set_in_layout(False)
        fig.canvas.draw()  # one layout pass: tick labels and legends measured where they are
        for ax, panel in zip(used, figure.panels):
            _thin_ticklabels(ax, bool(_categories(panel.series, panel.categories)))
        if not (shared or right):
            _legends_below(fig, used, ncols)  # changes the height only: the thinning still holds
        for item in moving:
            item.set_in_layout(True)
    return fig, ncols


def _renderer(fig: Any) -> Any:
    return fig.canvas.get_renderer()


def draw(ax: Any, panel: Panel, styles: Styles | None = None) -> None:
    """Draw `panel` into `ax`; `styles` (one per figure) keeps a label's style the same in every panel
    of the figure and gives every labelled series of a panel its own style."""
    styles = styles if styles is not None else Styles()
    mine = styles.panel(panel)
    categories = _categories(panel.series, panel.categories)
    bar_slots = _bar_slots(panel.series, categories)
    grid = _grid(panel, categories)
    for i, s in enumerate(panel.series):
        _draw_series(ax, s, i, categories, bar_slots, mine.series(s, categories), grid)
    for h in panel.histograms:
        values = np.asarray(h.values, dtype=float)
        values = values[np.isfinite(values)]
        if values.size:
            style = mine.pick(h.label, "hist", None)
            ax.hist(
                values, bins=h.bins, density=h.density, histtype="step", linewidth=1.6,
                label=h.label, color=style.color, linestyle=style.linestyle,
            )  # fmt: skip
    if panel.matrix is not None:
        _draw_matrix(ax, panel)
    slots = _span_slots(panel, categories)
    for span in panel.spans:
        color = span.color or _SPAN_COLOR.get(span.role, "#999999")
        edge = {"color": color, "linestyle": "-.", "linewidth": 1.3}
        if id(span) in slots:  # across its bar only, side by side with other bands on that bar
            x0, x1 = slots[id(span)]
            ax.fill_between([x0, x1], span.lo, span.hi, color=color, alpha=0.25, linewidth=0,
                            label=span.label or None)  # fmt: skip
            ax.hlines([span.lo, span.hi], x0, x1, **edge)
        else:
            ax.axhspan(span.lo, span.hi, color=color, alpha=0.13, linewidth=0,
                       label=span.label or None)  # fmt: skip
            if span.role == "band":
                for y in (span.lo, span.hi):
                    ax.axhline(y, **edge)
    for line in panel.hlines:
        ref = _ref(line)
        if ref.over is not None and ref.over in categories:
            x0, x1 = _ref_slot(ref, panel, categories, slots)
            ax.hlines(ref.at, x0, x1, label=ref.label or None, **mine.ref(ref))
        else:
            ax.axhline(ref.at, label=ref.label or None, **mine.ref(ref))
    for line in panel.vlines:
        ref = _ref(line)
        ax.axvline(ref.at, label=ref.label or None, **mine.ref(ref))
    ax.set_xlabel(_wrap(panel.xlabel, 34))
    ax.set_ylabel(_wrap(panel.ylabel, 28))
    ax.set_title(_wrap(panel.title, 32))
    if panel.logx:
        ax.set_xscale("log")
        _plain_log_labels(ax.xaxis)
    if panel.logy:
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis)
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    if categories:
        ax.set_xticks(range(len(categories)), _category_labels(categories))
        ax.set_xlim(-0.6, len(categories) - 0.4)
        ax.grid(False, axis="x")
    elif panel.xticks is not None:
        ax.minorticks_off()
        ax.set_xticks(panel.xticks, [_tick(t) for t in panel.xticks])
    if panel.note:
        ax.text(
            0.5, 0.5, _wrap(panel.note, 30), transform=ax.transAxes, ha="center", va="center",
            color="#555",
        )  # fmt: skip
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # below the panel, never over its data
        _panel_legend(ax, handles, labels)


def _plain_log_labels(axis: Any) -> None:
    """Log ticks as plain numbers (8, 16, 0.01, 1e+06); minor ones unlabelled for now."""
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _log_minor_labels(ax: Any) -> None:
    """A log axis showing fewer than three labelled decades labels its minor ticks too (the
    thinning pass then keeps those that fit); called once the limits are final."""
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log" or not isinstance(axis.get_major_formatter(), FuncFormatter):
            continue
        lo, hi = sorted(axis.get_view_interval())
        majors = [t for t in axis.get_majorticklocs() if lo <= t <= hi]
        if len(majors) < 3:
            axis.set_minor_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))


def _shared_legend(fig: Any, axes: list[Any], ncols: int) -> tuple[bool, Any]:
    """Entries every panel's legend shares (same label, same colour) go to one legend below the
    figure; each panel keeps a legend only for its own entries (a panel's reference line). Returns
    whether no panel legend is left, and the figure's legend (None: none)."""
    if len(axes) < 2:
        return False, None
    entries = [ax.get_legend_handles_labels() for ax in axes]
    maps = [dict(zip(labels, handles)) for handles, labels in entries]
    common = [
        lb for lb in entries[0][1]
        if all(lb in m for m in maps) and len({_handle_color(m[lb]) for m in maps}) == 1
    ]  # fmt: skip
    if not common or (len(common) < 2 and any(len(m) > 1 for m in maps)):
        return False, None
    left = False
    for ax, (handles, labels) in zip(axes, entries):
        ax.get_legend().remove()
        own = [(h, lb) for h, lb in zip(handles, labels) if lb not in common]
        if own:
            _panel_legend(ax, [h for h, _ in own], [lb for _, lb in own])
            left = True
    chars = PANEL_WIDTH * ncols * 72 / (0.6 * TEXT_PT)  # characters across the figure
    per = max(len(lb) for lb in common) + 6
    legend = fig.legend(
        [maps[0][lb] for lb in common], [_wrap(lb, 40) for lb in common],
        loc="outside lower center", frameon=False, ncol=max(1, min(len(common), int(chars // per))),
    )  # fmt: skip
    return not left, legend


def _handle_color(handle: Any) -> str | None:
    """A legend handle's colour (a line, an error bar, a bar or a shaded band), for comparing."""
    from matplotlib.colors import to_hex

    for artist in (handle, *getattr(handle, "lines", ()), *getattr(handle, "patches", ())):
        for getter in ("get_color", "get_facecolor"):
            if hasattr(artist, getter):
                try:
                    value = getattr(artist, getter)()
                    value = value[0] if getattr(value, "ndim", 1) == 2 else value
                    return str(to_hex(value))
                except (ValueError, TypeError, IndexError):
                    continue
    return None


def _panel_legend(ax: Any, handles: list[Any], labels: list[str]) -> None:
    """A panel's legend, to be put below its x axis (by _legends_below, after the layout pass);
    many short entries (d=16, d=64, ...) in two columns."""
    columns = 2 if len(labels) > 4 and max(len(lb) for lb in labels) <= 14 else 1
    ax.legend(
        handles, [_wrap(lb, 30) for lb in labels], loc="upper center", frameon=False,
        ncol=columns, borderaxespad=0.0, handlelength=1.8, columnspacing=1.2,
    )  # fmt: skip


def _span_slots(panel: Panel, categories: list[str]) -> dict[int, tuple[float, float]]:
    """x extent of each span drawn over one bar: bands on the same bar share its slot side by side."""
    by_bar: dict[str, list[Any]] = {}
    for span in panel.spans:
        if span.over is not None and span.over in categories:
            by_bar.setdefault(span.over, []).append(span)
    out: dict[int, tuple[float, float]] = {}
    for bar, spans in by_bar.items():
        i, width = categories.index(bar), 0.96 / len(spans)
        for k, span in enumerate(spans):
            out[id(span)] = (i - 0.48 + k * width, i - 0.48 + (k + 1) * width)
    return out


def _ref_slot(
    ref: Ref, panel: Panel, categories: list[str], slots: dict[int, tuple[float, float]]
) -> tuple[float, float]:
    """A line over one bar sits in the slot of that bar's band of the same colour, if any."""
    for span in panel.spans:
        if span.over == ref.over and span.color == ref.color and id(span) in slots:
            return slots[id(span)]
    i = categories.index(str(ref.over))
    return i - 0.48, i + 0.48


def _ref_style(ref: Ref) -> dict[str, Any]:
    style = dict(_REF_STYLE[ref.role])
    if ref.color:
        style["color"] = ref.color
    return style


def _ref(line: tuple[float, str] | Ref) -> Ref:
    return line if isinstance(line, Ref) else Ref(float(line[0]), str(line[1]))


def _draw_matrix(ax: Any, panel: Panel) -> None:
    assert panel.matrix is not None
    image = ax.imshow(
        np.asarray(panel.matrix.values, dtype=float), aspect="auto", cmap="viridis",
        interpolation="nearest",
    )  # fmt: skip
    bar = ax.figure.colorbar(image, ax=ax)
    if panel.matrix.colorbar:
        bar.set_label(_wrap(panel.matrix.colorbar, 24))
    if panel.matrix.xticklabels is not None:
        ax.set_xticks(range(len(panel.matrix.xticklabels)), panel.matrix.xticklabels)
    if panel.matrix.yticklabels is not None:
        ax.set_yticks(range(len(panel.matrix.yticklabels)), panel.matrix.yticklabels)
    ax.grid(False)


def _legends_below(fig: Any, axes: list[Any], ncols: int) -> None:
    """Put each legend just below its panel's x axis (a fixed distance in inches, so later layout
    passes keep it there) and make the figure taller by the tallest legend of each row (measured in
    the last draw, where the legends still sat inside their panels)."""
    renderer = fig.canvas.get_renderer()
    rows: dict[int, float] = {}
    for i, ax in enumerate(axes):
        legend = ax.get_legend()
        if legend is not None:
            height = legend.get_window_extent(renderer).height / fig.dpi
            rows[i // ncols] = max(rows.get(i // ncols, 0.0), height)
    if not rows:
        return
    for ax in axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        axis = ax.xaxis.get_tightbbox(renderer)
        drop = (ax.get_window_extent(renderer).y0 - axis.y0) / fig.dpi if axis is not None else 0.4
        below = ax.transAxes + ScaledTranslation(0, -(drop + 0.04), fig.dpi_scale_trans)
        legend.set_bbox_to_anchor((0.5, 0.0), transform=below)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + sum(rows.values()) + 0.1 * len(rows))


def _thin_ticklabels(ax: Any, categorical: bool) -> None:
    """Blank tick labels that would overlap a neighbour: every k-th major label for the smallest k
    that fits (so the labels stay evenly spaced), then the minor labels that fit between them. The
    chosen ticks are then fixed, so later layout passes keep them. Category names are never blanked
    (they are wrapped instead)."""
    renderer = ax.figure.canvas.get_renderer()
    axes = [(ax.yaxis, False)] if categorical else [(ax.xaxis, True), (ax.yaxis, False)]
    for axis, horizontal in axes:
        majors = _labelled_ticks(axis, False, renderer)
        minors = _labelled_ticks(axis, True, renderer)
        shown = [m for m in majors if m[1]]
        step = next(
            k for k in range(1, len(shown) + 2)
            if not any(_clash(a[2], b[2], horizontal) for a, b in zip(shown[::k], shown[::k][1:]))
        )  # fmt: skip
        keep = {loc for loc, _, _ in shown[::step]}
        kept = [box for loc, _, box in shown if loc in keep]
        axis.set_ticks(
            [loc for loc, _, _ in majors], [text if loc in keep else "" for loc, text, _ in majors]
        )
        if any(text for _, text, _ in minors):
            texts = []
            for _, text, box in minors:
                fits = bool(text) and not any(_clash(box, k, horizontal) for k in kept)
                texts.append(text if fits else "")
                if fits:
                    kept.append(box)
            axis.set_ticks([loc for loc, _, _ in minors], texts, minor=True)


def _labelled_ticks(axis: Any, minor: bool, renderer: Any) -> list[tuple[float, str, Any]]:
    """(location, label text, label box) of the ticks the last draw placed inside the view."""
    locs = axis.get_minorticklocs() if minor else axis.get_majorticklocs()
    ticks = axis.get_minor_ticks(len(locs)) if minor else axis.get_major_ticks(len(locs))
    lo, hi = sorted(axis.get_view_interval())
    slack = (hi - lo) * 1e-9
    out = []
    for loc, tick in zip(locs, ticks):
        if lo - slack <= loc <= hi + slack:
            label = tick.label1
            text = label.get_text() if label.get_visible() else ""
            out.append((float(loc), text, label.get_window_extent(renderer)))
    return out


def _clash(a: Any, b: Any, horizontal: bool, pad: float = 4.0) -> bool:
    if horizontal:
        return bool(a.x0 - pad < b.x1 and b.x0 < a.x1 + pad)
    return bool(a.y0 - pad < b.y1 and b.y0 < a.y1 + pad)


def smallest_text(fig: Any) -> float:
    """The smallest font size (pt) of any visible text in a drawn figure."""
    sizes = [
        float(t.get_fontsize())
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and _shown(t)
    ]
    return min(sizes, default=TEXT_PT)


def _shown(text: Any) -> bool:
    parent = text.axes
    return parent is None or parent.get_visible()


def _png_size(path: Path) -> tuple[int, int]:
    head = Path(path).read_bytes()[:24]  # the IHDR chunk follows the 8-byte signature
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(str(text), width)) if len(str(text)) > width else str(text)


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _categories(series: list[Series], order: list[str] | None = None) -> list[str]:
    """The named x categories of a panel: `order` first, then the others in order of first
    appearance (empty: a numeric x axis)."""
    if not series or all(_numeric(s.x) for s in series):
        return []
    seen: dict[str, None] = dict.fromkeys(order or [])
    for s in series:
        for x in s.x:
            seen.setdefault(str(x), None)
    return list(seen)


def _category_labels(categories: list[str]) -> list[str]:
    width = max(7, 28 // max(1, len(categories)))
    return [_wrap(c, width) for c in categories]


def _bar_slots(series: list[Series], categories: list[str]) -> dict[int, tuple[float, float, bool]]:
    """(offset, width, named by the axis) of each bar series: side by side where bar series share a
    category (then the legend tells them apart), centred and unlabelled where each has its own."""
    bars = [i for i, s in enumerate(series) if s.kind == "bar"]
    if not bars:
        return {}
    shared = any(
        {str(x) for x in series[i].x} & {str(x) for x in series[j].x}
        for a, i in enumerate(bars)
        for j in bars[a + 1 :]
    )
    if not shared:
        return {i: (0.0, 0.7, bool(categories)) for i in bars}
    width = 0.8 / len(bars)
    return {i: (-0.4 + width * (k + 0.5), width, False) for k, i in enumerate(bars)}


_BAR_COLORS = ["#4c72b0", "#dd8452", "#8c8c8c", "#55a868", "#c44e52", "#8172b3", "#937860"]


def _tick(value: float) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _floats(values: list[Any] | None) -> np.ndarray | None:
    if values is None:
        return None
    return np.asarray([math.nan if v is None else v for v in values], dtype=float)


def _draw_series(
    ax: Any,
    s: Series,
    index: int,
    categories: list[str],
    bar_slots: dict[int, tuple[float, float, bool]],
    style: Style | None = None,
    grid: np.ndarray | None = None,
) -> None:
    if categories:
        x = np.asarray([categories.index(str(v)) for v in s.x], dtype=float)
    else:
        x = np.asarray(s.x, dtype=float)
    y, lo, hi = _floats(s.y), _floats(s.lo), _floats(s.hi)
    assert y is not None
    if categories:  # a line through named categories runs in the axis' order
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        lo = lo[order] if lo is not None else None
        hi = hi[order] if hi is not None else None
    err = None
    if lo is not None and hi is not None:
        err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
    # a series that is one named category is labelled by the axis, not the legend
    named = bool(categories) and len(s.x) == 1 and str(s.x[0]) == s.label
    kw: dict[str, Any] = {"label": None if named or not s.legend else s.label}
    if s.color:
        kw["color"] = s.color
    if s.kind == "bar":
        offset, width, by_axis = bar_slots.get(index, (0.0, 0.7, False))
        if by_axis:
            kw["label"] = None  # the category axis names this bar
        kw.setdefault("color", _BAR_COLORS[index % len(_BAR_COLORS)])
        ax.bar(
            x + offset, y, width=width, yerr=err, capsize=4, alpha=0.85,
            error_kw={"linewidth": 1.4}, **kw,
        )  # fmt: skip
        return
    style = style or Style(s.color or "C0", _VARIANTS[s.kind][0][0], _VARIANTS[s.kind][0][1])
    kw["color"] = style.color
    if s.kind == "points":
        dot = style.marker or "o"
        if err is not None:
            size = 7 if named else 4
            ax.errorbar(x, y, yerr=err, fmt=dot, ms=size, capsize=5 if named else 3, **kw)
        else:
            ax.plot(x, y, dot, ms=4, alpha=0.8, **kw)
        return
    marker = style.marker if s.kind == "line" and len(x) <= 25 else None
    if s.kind == "line" and grid is not None:  # measured points: no line across an x not measured
        x, y, lo, hi = _gaps(x, y, lo, hi, grid)
        if marker is None and _isolated(y):
            marker = "o"  # a point with no neighbour is seen only as a marker
    if s.kind == "step":
        (line,) = ax.step(x, y, where="mid", linestyle=style.linestyle, **kw)
    else:
        (line,) = ax.plot(x, y, linestyle=style.linestyle, marker=marker, ms=4, **kw)
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
        alone = _alone(y)
        if alone.any():
            # a band has no width at a point with no neighbour: its interval as a whisker there
            below, above = np.clip(y - lo, 0, None)[alone], np.clip(hi - y, 0, None)[alone]
            ax.errorbar(x[alone], y[alone], yerr=np.vstack([below, above]), fmt="none",
                        ecolor=line.get_color(), alpha=0.6, capsize=3)  # fmt: skip


# -- styles: every labelled series of a panel distinct, a label alike across a figure's panels ------------
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")  # fmt: skip
_DASHES: tuple[Any, ...] = ("--", ":", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 1)), (0, (9, 3)))
# (linestyle, marker) of a kind's first, second, ... style; a colour met again in a panel takes the next
_VARIANTS: dict[str, list[tuple[Any, str | None]]] = {
    "line": [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D"), ("-", "v"), ("--", "P")],
    "dashed": [(d, None) for d in _DASHES],
    "step": [("-", None), *((d, None) for d in _DASHES)],
    "points": [(None, m) for m in ("o", "s", "^", "D", "v", "P")],
    "hist": [("-", None), *((d, None) for d in _DASHES)],
}


@dataclass(frozen=True)
class Style:
    color: str
    linestyle: Any
    marker: str | None


def _hex(color: str | None) -> str | None:
    from matplotlib.colors import to_hex

    try:
        return str(to_hex(color)) if color else None
    except ValueError:
        return str(color)


class Styles:
    """The styles of one figure's series: a label keeps its colour in every panel (so a legend shared
    by the panels means the same everywhere); in one panel, labelled series with different labels
    never share a style — past the palette's ten colours, or where a colour is given twice, the
    line style and marker change."""

    def __init__(self) -> None:
        self.colors: dict[str, str] = {}  # label -> colour
        self.looks: dict[tuple[str, str], Style] = {}  # (label, kind) -> its style so far
        self.count = 0  # colours handed out

    def panel(self, panel: Panel) -> PanelStyles:
        """The styles of one panel; the colours its series name, and those of its reference lines
        and bands (a control's orange, a band's red), are not handed to other series."""
        given = {_hex(s.color) for s in panel.series if s.color}
        refs = [_ref(line) for line in (*panel.hlines, *panel.vlines)]
        given |= {_hex(_ref_style(r)["color"]) for r in refs}
        given |= {_hex(sp.color or _SPAN_COLOR.get(sp.role, "#999999")) for sp in panel.spans}
        return PanelStyles(self, {c for c in given if c}, panel)

    def colour(self, label: str | None, given: set[str]) -> str:
        if label is not None and label in self.colors:
            return self.colors[label]
        for _ in range(len(_PALETTE)):  # the next palette colour unlike any the panel names
            color = _PALETTE[self.count % len(_PALETTE)]
            self.count += 1
            if not any(_near(color, other) for other in given):
                break
        if label is not None:
            self.colors[label] = color
        return color


class PanelStyles:
    """One panel's styles. Its reference lines keep their role's style (a control dashed orange, a
    chance line dotted grey) unless an earlier one looks the same; its labelled series then take
    styles that look like no labelled line already there."""

    def __init__(self, styles: Styles, given: set[str], panel: Panel | None = None) -> None:
        self.styles, self.given = styles, given
        self.taken: list[tuple[str, Any, str | None, str]] = []  # colour, dashes, marker, label
        self.refs: dict[Ref, dict[str, Any]] = {}
        for line in (*panel.hlines, *panel.vlines) if panel is not None else ():
            ref = _ref(line)
            if ref not in self.refs:
                self.refs[ref] = self._ref(ref)

    def _clash(self, color: str, linestyle: Any, marker: str | None, label: str) -> bool:
        dash = _dash_key(linestyle)
        return any(
            lb != label and d == dash and m == marker and _alike(c, color)
            for c, d, m, lb in self.taken
        )

    def series(self, s: Series, categories: list[str]) -> Style | None:
        if s.kind == "bar":
            return None
        if bool(categories) and len(s.x) == 1 and str(s.x[0]) == s.label:
            return None  # named by the axis: its colour is the role's
        return self.pick(s.label, s.kind, s.color)

    def pick(self, label: str | None, kind: str, color: str | None) -> Style:
        color = _hex(color) or self.styles.colour(label, self.given)
        before = self.styles.looks.get((label, kind)) if label is not None else None
        tried = set(self.given)
        for _ in range(len(_PALETTE) + 1):
            again = [(before.linestyle, before.marker)] if before and before.color == color else []
            for linestyle, marker in [*again, *_VARIANTS[kind]]:
                if label is None:
                    return Style(color, linestyle, marker)
                if not self._clash(color, linestyle, marker, label):
                    self.taken.append((color, _dash_key(linestyle), marker, label))
                    style = Style(color, linestyle, marker)
                    self.styles.looks.setdefault((label, kind), style)
                    return style
            tried.add(color)  # every variant of this colour taken: the next free colour
            color = self.styles.colour(None, tried)
        return Style(color, *_VARIANTS[kind][0])

    def _ref(self, ref: Ref) -> dict[str, Any]:
        style = _ref_style(ref)
        if not ref.label:
            return style
        color = _hex(style["color"]) or ""
        for dash in (style["linestyle"], *_DASHES):
            if not self._clash(color, dash, None, ref.label):
                self.taken.append((color, _dash_key(dash), None, ref.label))
                return {**style, "linestyle": dash}
        return style

    def ref(self, ref: Ref) -> dict[str, Any]:
        """A reference line's style: its role's, unless an earlier labelled line of the panel
        already looks the same (then the next dash pattern)."""
        if ref not in self.refs:
            self.refs[ref] = self._ref(ref)
        return self.refs[ref]


def _near(a: str, b: str, limit: float = 0.2) -> bool:
    """Two colours a reader could take for one (the palette's orange and a control's orange): less
    than `limit` apart in RGB."""
    from matplotlib.colors import to_rgb

    try:
        return bool(np.linalg.norm(np.subtract(to_rgb(a), to_rgb(b))) < limit)
    except ValueError:
        return a == b


def _alike(a: str, b: str) -> bool:
    """Two line colours a reader could take for one: close, or both grey (#555 beside #808080)."""
    from matplotlib.colors import to_rgb

    def grey(c: str) -> bool:
        try:
            rgb = to_rgb(c)
        except ValueError:
            return False
        return max(rgb) - min(rgb) < 0.08

    return _near(a, b, ALIKE) or (grey(a) and grey(b))


def _dash_key(linestyle: Any) -> Any:
    return {"--": "dashed", ":": "dotted", "-.": "dashdot", "-": "solid"}.get(linestyle, linestyle)


# -- gaps: a line joins measured points only ------------------------------------------------------------
def _grid(panel: Panel, categories: list[str]) -> np.ndarray | None:
    """The x a panel's measured series could have: every category, or the panel's ticks when it
    names them, else every x a line or points series of the panel has, where those are a design's
    few values (at most `GRID_MAX`: widths, n); a continuous x (steps, radii) has no such grid."""
    if categories:
        return np.arange(len(categories), dtype=float)
    if panel.xticks is not None:
        return np.asarray(panel.xticks, dtype=float)
    xs = [v for s in panel.series if s.kind in ("line", "points") and _numeric(s.x) for v in s.x]
    grid = np.unique(np.asarray(xs, dtype=float))
    return grid if 0 < grid.size <= GRID_MAX else None


def _gaps(
    x: np.ndarray, y: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """NaN between two neighbouring points where the grid has an x the series lacks, so the line
    (and its band) breaks there instead of crossing an x that was not measured."""
    if x.size < 2 or np.any(np.diff(x) < 0):
        return x, y, lo, hi
    scale = max(1.0, float(np.max(np.abs(grid)))) if grid.size else 1.0
    tol = 1e-9 * scale
    cuts = [
        i + 1 for i in range(x.size - 1)
        if np.any((grid > x[i] + tol) & (grid < x[i + 1] - tol))
    ]  # fmt: skip
    if not cuts:
        return x, y, lo, hi
    mid = [(x[i - 1] + x[i]) / 2 for i in cuts]

    def cut(a: np.ndarray | None, fill: Any) -> np.ndarray | None:
        return None if a is None else np.insert(a, cuts, fill)

    x_out = cut(x, mid)
    y_out = cut(y, math.nan)
    assert x_out is not None and y_out is not None
    return x_out, y_out, cut(lo, math.nan), cut(hi, math.nan)


def _alone(y: np.ndarray) -> np.ndarray:
    """The finite points with no finite neighbour (a line draws nothing there)."""
    ok = np.isfinite(y)
    left = np.concatenate([[False], ok[:-1]])
    right = np.concatenate([ok[1:], [False]])
    return np.asarray(ok & ~left & ~right)


def _isolated(y: np.ndarray) -> bool:
    return bool(_alone(y).any())


__all__ = [
    "DPI", "MAX_COLUMNS", "TEXT_PT", "FigureFile", "Style", "Styles", "build", "draw", "save", "save_as",
    "smallest_text",
]  # fmt: skip
