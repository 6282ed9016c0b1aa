"""The ``check`` report: a table for people, one JSON object for programs."""

from __future__ import annotations

from collections import Counter

__all__ = ["summary", "as_json", "as_text"]


def summary(verdicts) -> dict:
    counts = Counter(v.verdict for v in verdicts)
    expected = [v for v in verdicts if v.claim.expect is not None and v.verdict != "invalid"]
    return {"claims": len(verdicts), "holds": counts["holds"], "fails": counts["fails"],
            "undecided": counts["undecided"], "invalid": counts["invalid"],
            "expected": len(expected), "as_expected": sum(bool(v.as_expected) for v in expected),
            "ok": all(v.ok for v in verdicts)}


def as_json(verdicts) -> dict:
    return {"claims": [v.as_json() for v in verdicts], "summary": summary(verdicts)}


def _cut(text, width) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _mark(v) -> str:
    if v.as_expected is None:
        return v.verdict
    return f"{v.verdict} ({'as expected' if v.as_expected else 'expected ' + v.claim.expect})"


def as_text(verdicts, *, width: int = 100) -> str:
    """One block per claim: id, verdict (and whether it was expected), claimed, derived and why."""
    from .decide import show_number
    lines = []
    for v in verdicts:
        lines.append(f"{v.claim.id}: {_mark(v)}")
        if v.claim.says:
            lines.append(f"  says     {_cut(v.claim.says, width)}")
        if v.claimed:
            lines.append(f"  claimed  {_cut(v.claimed, width)}")
        if v.derived is not None:
            derived = show_number(v.derived) if isinstance(v.derived, int) else v.derived
            lines.append(f"  derived  {_cut(derived, width)}")
        if v.reason:
            lines.append(f"  why      {_cut(v.reason, 4 * width)}")
    s = summary(verdicts)
    tail = (f"{s['claims']} claims: {s['holds']} hold, {s['fails']} fail, {s['undecided']} undecided, "
            f"{s['invalid']} invalid")
    if s["expected"]:
        tail += f"; {s['as_expected']} of {s['expected']} as expected"
    return "\n".join(lines + [tail]) + "\n"
