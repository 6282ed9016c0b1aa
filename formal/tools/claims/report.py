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
            "not_reached": sum(not v.reached for v in verdicts), "ok": all(v.ok for v in verdicts)}


def as_json(verdicts) -> dict:
    return {"claims": [v.as_json() for v in verdicts], "summary": summary(verdicts)}


def _cut(text, width) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _mark(v) -> str:
    if v.as_expected is None:
        return v.verdict
    return f"{v.verdict} ({'as expected' if v.as_expected else 'expected ' + v.claim.expect})"


def _derived(v) -> str:
    from .verdict import show_number
    if v.derived is None:
        return ""
    return show_number(v.derived) if isinstance(v.derived, int) else str(v.derived)


def as_text(verdicts, *, verbose: bool = False) -> str:
    """A table — claim, verdict (and whether it was expected), claimed, derived — then why each claim that
    does not hold fails (with ``verbose``, every claim's reason), and a summary line."""
    header = ("claim", "verdict", "claimed", "derived")
    rows = [(_cut(v.claim.id, 36), _mark(v), _cut(v.claimed, 32), _cut(_derived(v), 32)) for v in verdicts]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    explained = [v for v in verdicts if v.reason and (verbose or v.verdict != "holds")]
    if explained:
        lines += ["", "why:"]
        for v in explained:
            lines.append(f"  {v.claim.id}: {_cut(v.reason, 2000)}")
    s = summary(verdicts)
    tail = (f"{s['claims']} claims: {s['holds']} hold, {s['fails']} fail, {s['undecided']} undecided, "
            f"{s['invalid']} invalid")
    if s["expected"]:
        tail += f"; {s['as_expected']} of {s['expected']} as expected"
    if s["not_reached"]:
        from .verdict import INTERRUPTED
        cut = any(v.reason == INTERRUPTED for v in verdicts if not v.reached)
        tail += f"; {s['not_reached']} not reached {'(interrupted)' if cut else 'in the time budget'}"
    return "\n".join(lines + ["", tail]) + "\n"
