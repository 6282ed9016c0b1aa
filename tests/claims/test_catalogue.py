"""The shipped catalogue (formal/tools/claims/catalogue/*.toml): every claim gets the verdict it expects, and the
catalogue has what it must (sources, expected verdicts, at least 60 claims and 15 failures)."""

import pytest

from formal.tools.claims.catalogue import files
from formal.tools.claims.claim import load
from formal.tools.claims.decide import decide
from tests.tiers import fast_few, slow

CLAIMS = [c for f in files() for c in load(f)]


def test_the_catalogue_is_large_and_documented():
    assert len(CLAIMS) >= 60
    assert sum(c.expect == "fails" for c in CLAIMS) >= 15
    assert len({c.id for c in CLAIMS}) == len(CLAIMS), "ids are unique across the catalogue"
    for c in CLAIMS:
        assert c.error is None, (c.id, c.error)
        assert c.source and c.says and c.expect in ("holds", "fails"), c.id
        if c.expect == "fails":
            assert c.data.get("note") or "graph" in c.subject or "property" in c.data, \
                f"{c.id}: a failing claim says what the source probably meant (note)"


@pytest.mark.parametrize("claim", fast_few(CLAIMS, keep=20), ids=[c.id for c in CLAIMS])
def test_each_claim_gets_its_expected_verdict(claim):
    verdict = decide(claim)
    assert verdict.verdict == claim.expect, f"{verdict.verdict}: {verdict.reason}"


@slow
def test_check_catalogue_exits_0(capsys):
    from formal.tools.cli import main
    assert main(["check", "--catalogue", "--json"]) == 0
    import json
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["ok"] and report["summary"]["claims"] == len(CLAIMS)
