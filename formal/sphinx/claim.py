"""``.. formal:claim::`` — a claim of the catalogue with the verdict it gets when the docs build."""

from __future__ import annotations

from docutils import nodes

from . import nodes as build
from .entry import Entry

__all__ = ["ClaimDirective", "catalogue"]


class ClaimDirective(Entry):
    """``.. formal:claim:: ID`` — a claim of the catalogue with the verdict it gets when the docs build."""

    kind = "claim"

    def run(self):
        claim_id = self.arguments[0]
        verdicts = [v for v in catalogue() if v.claim.id == claim_id]
        if not verdicts:
            return self.fail(f"formal:claim {claim_id}: not in the catalogue")
        v = verdicts[0]
        out = self.target(claim_id, [f"{claim_id} (claim)"])
        unexpected = v.as_expected is False
        verdict = nodes.inline(text=v.verdict + (" (unexpected)" if unexpected else ""),
                               classes=[f"formal-verdict-{v.verdict}"] + (["formal-verdict-unexpected"]
                                                                           if unexpected else []))
        box = nodes.container(classes=["formal-claim"])
        box += build.para(nodes.strong(text=f"Claim {claim_id}: "), f"“{v.claim.says}”")
        box += build.field_list([("Source", v.claim.source), ("Verdict", [verdict]), ("Why", v.reason or "—")])
        out.append(box)
        return out


_VERDICTS: list = []


def catalogue() -> list:
    """The catalogue's verdicts, decided once per build."""
    if not _VERDICTS:
        from ..claims.command import run_files
        _VERDICTS.extend(run_files([], catalogue=True))
    return _VERDICTS
