"""Words against fields: every sentence a claim card prints must follow from the fields of its row.

`card_problems(row)` reads one `claims.json` row and returns what contradicts itself — a label that is
not the verdict with its qualifier, an "outside regime" that the regime does not say, a robustness
sentence or summary that the alternatives' effects do not give, an undecided alternative counted
without the power to decide, a power line about other units than the card's. The report renders
its words from these fields; this check is what the tests run over every claim of a quick store."""

from __future__ import annotations

import re
from typing import Any

from learnability.claims.claim import DECIDED_VERDICTS, POWER_TO_COUNT, robustness_sentence

_EFFECTS = ("changed", "no-op", "not evaluated", "underpowered", "not counted")


def card_problems(row: dict[str, Any]) -> list[str]:
    """What in `row` (a claims.json row) contradicts its own fields; [] when nothing does."""
    out: list[str] = []
    verdict, qualifier = row.get("verdict"), row.get("qualifier")
    label = f"{verdict} — {qualifier}" if qualifier else verdict
    if row.get("label") not in (None, label):
        out.append(f"label {row.get('label')!r} is not the verdict with its qualifier ({label!r})")
    regime = row.get("regime") or {}
    outside = regime.get("inside") is False
    if qualifier == "outside regime" and not (
        verdict in ("reproduced", "not reproduced") and outside
    ):
        out.append(
            "qualified 'outside regime' but the regime is not outside or the verdict undecided"
        )
    if outside and verdict in ("reproduced", "not reproduced") and qualifier != "outside regime":
        out.append(f"a {verdict} verdict outside the regime is not qualified 'outside regime'")
    if qualifier == "outside regime" and "outside regime" not in str(row.get("measured", "")):
        out.append("the measured text does not say the verdict lies outside the regime")
    alternatives = row.get("robustness") or []
    effects = [a.get("effect") for a in alternatives]
    if any(e not in _EFFECTS for e in effects):
        out.append(f"unknown alternative effects {sorted(set(effects) - set(_EFFECTS))}")
    changed = [a for a in alternatives if a.get("effect") == "changed"]
    summary = row.get("robustness_summary") or {}
    counted = {
        "effective": len(changed),
        "agree": sum(a.get("verdict") == verdict for a in changed),
        "no_op": effects.count("no-op"),
        "not_evaluated": effects.count("not evaluated"),
        "underpowered": effects.count("underpowered"),
        "not_counted": effects.count("not counted"),
    }
    if summary and any(summary.get(k, 0) != v for k, v in counted.items()):
        out.append(f"robustness_summary {summary} is not what the alternatives give {counted}")
    for a in changed:  # an undecided alternative counts only with the power to decide
        power = (a.get("power") or {}).get("current")
        if a.get("verdict") not in DECIDED_VERDICTS and (power is None or power < POWER_TO_COUNT):
            out.append(
                f"alternative {a.get('alternative')!r} counts though undecided at power {power}"
            )
    robust = row.get("robust")
    if verdict not in DECIDED_VERDICTS and robust is not None:
        out.append(f"an {verdict} verdict is marked robust={robust}")
    if verdict in DECIDED_VERDICTS:
        expected = None if not changed else counted["agree"] == len(changed)
        if robust != expected:
            out.append(f"robust={robust} but the effective alternatives give {expected}")
    reason = row.get("robustness_reason")
    if reason is not None and reason != robustness_sentence(str(verdict), robust, counted):
        out.append(f"robustness sentence {reason!r} does not follow from the fields")
    power = row.get("power") or {}
    units = (row.get("units") or {}).get("count")
    now = power.get("units_now")
    if isinstance(now, int) and isinstance(units, int) and units and now > units:
        out.append(f"the power line counts {now} units, the card {units}")
    text = str(power.get("text") or "")
    lead = re.match(r"(\d+) ", text)
    if lead and isinstance(now, int) and int(lead.group(1)) != now:
        out.append(f"the power text speaks of {lead.group(1)} units, its field of {now}")
    if (
        lead
        and isinstance(units, int)
        and int(lead.group(1)) != units
        and "in the smallest cell" not in text
    ):
        out.append(
            f"the power text speaks of {lead.group(1)} units without saying the card has {units}"
        )
    history = row.get("history") or []
    if history and not row.get("adaptive") and history[0].get("verdict") != verdict:
        out.append(
            f"the current rule's history entry says {history[0].get('verdict')}, the card {verdict}"
        )
    return out


__all__ = ["card_problems"]
