"""Figures, statistics and the HTML report (see `figures` and `html`)."""

from learnability.report.html import build_report

__all__ = ["build_report"]
