"""The boundary case of scores past exp's range: present exactly where a softmax runs, its softmax inputs far
past 709 in the spec's own execution, and a softmax that does not subtract the maximum caught there — for
shape and finiteness only, in every precision."""

import numpy as np
import pytest

from formal.engine.tape import untaped
from formal.ops.reductions import Softmax
from formal.sampling.examples import examples
from formal.sampling.sizes import LARGE_SCORES
from formal.sampling.variants import EXAMPLE_ALGORITHMS
from reference.catalogue.attention import attention
from reference.catalogue.catalogue import mutants
from reference.conformance.conform import conform
from tests.tiers import fast_few, in_fast_tier

#: The algorithms whose spec runs quickly enough to execute here (a whole Swin takes seconds per example).
_SLOW = {"swin"}


@pytest.fixture
def softmax_inputs(monkeypatch):
    """Every input the spec's softmax op receives while the fixture is active: an oracle independent of how
    the examples find the softmaxes (from the lines).  Untaped: a replay of a tape an earlier test recorded on
    the same shapes runs compiled lines bound to the op's method before it was patched, and sees nothing."""
    seen = []
    original = Softmax.numpy

    def recording(self, ctx, s):
        seen.append((self.over, np.asarray(s)))
        return original(self, ctx, s)
    monkeypatch.setattr(Softmax, "numpy", recording)
    with untaped():
        yield seen


@pytest.mark.parametrize("name", fast_few([n for n in EXAMPLE_ALGORITHMS if n not in _SLOW], keep=in_fast_tier))
def test_the_case_exists_exactly_where_a_softmax_runs_and_overflows_exp_there(name, softmax_inputs):
    """An algorithm whose random example runs a softmax has the large-score case, and the case's variant runs one
    (drawn again where the first draw has none: average pooling); on that case some softmax input is past exp's
    range (above 709.8 exp is ∞; far below 0 every exp of a column is 0), so exp(s)/Σexp(s) without the maximum
    subtracted is not finite there, and the spec's output is still finite where it was finite before."""
    cases = examples(name, 1, max_size=4)
    large = [e for e in cases if e.case == LARGE_SCORES]
    ordinary = next(e for e in cases if e.case == "random")
    ordinary.algorithm(**ordinary.arguments)
    assert large or not softmax_inputs, (name, len(softmax_inputs))
    if not large:
        return
    softmax_inputs.clear()
    out = large[0].algorithm(**large[0].arguments)
    assert softmax_inputs, (name, "the large-score case's variant runs no softmax", large[0].algorithm.options)
    with np.errstate(all="ignore"):
        naive = [np.exp(s) / np.exp(s).sum(axis=0) for _, s in softmax_inputs]
    biggest = max(float(np.max(np.abs(s[np.isfinite(s)]), initial=0.0)) for _, s in softmax_inputs)
    assert any(not np.isfinite(p).all() for p in naive), (name, biggest)
    outputs = out if isinstance(out, tuple) else (out,)
    assert all(np.isfinite(np.asarray(o, dtype=float)[~np.isnan(np.asarray(o, dtype=float))]).all()
               for o in outputs)


@pytest.mark.parametrize("mutant", ["attention_softmax_without_max", "unembedding_softmax_without_max",
                                    "dtransformer_attention_softmax_without_max",
                                    "dtransformer_output_softmax_without_max"])
def test_a_softmax_without_the_maximum_is_caught_at_the_large_case(mutant):
    """Each unstable softmax passes every other example (its scores stay small) and fails `finite` on the
    large-score case, in float64 and in bfloat16 alike."""
    entry = next(e for e in mutants() if e.name == mutant)
    for precision in ("float64", "bfloat16"):
        report = conform(entry.function, entry.algorithm, options=entry.options, precision=precision)
        assert report.failure["case"] == LARGE_SCORES and report.failure["property"] == "finite", report.failure
        assert "NaN" in report.failure["message"]


def test_the_case_checks_shape_and_finiteness_only():
    """A correct implementation passes under every precision; in each the large-score case counts for shape
    and finite but not for spec or the relational properties."""
    counts = {}
    for precision in ("float64", "bfloat16"):
        report = conform(attention(), "attention", precision=precision)
        assert report.ok, report.failure
        counts[precision] = {k: c.examples for k, c in report.checks.items()}
    assert counts["bfloat16"] == counts["float64"]
    assert counts["float64"]["shape"] == counts["float64"]["finite"] == counts["float64"]["spec"] + 1


def test_a_loss_keeps_its_logits_small():
    """In a loss (−log P of the probabilities) the logits' parameters keep their ordinary spread (an
    underflowing probability would make the spec's loss infinite); its attention scores' are scaled."""
    case = next(e for e in examples("dloss", 0, tied=False) if e.case == LARGE_SCORES)
    assert np.isfinite(case.algorithm(**case.arguments))
    assert np.abs(case.arguments["W_u"]).max() < 10 < 100 < np.abs(case.arguments["W_q"]).max()


def test_verify_checks_the_large_case_for_finiteness_below_float64(monkeypatch):
    """verify's bfloat16 check measures the reference's error on every example but the large-score case, which
    it passes (0) when the outputs are finite where the spec's are and fails (∞) otherwise."""
    pytest.importorskip("torch")
    import torch

    from reference.verification import checks
    measure = checks.Measure(torch.device("cpu"))
    cases = examples("attention", 2)
    large = next(e for e in cases if e.case == LARGE_SCORES)
    ordinary = next(e for e in cases if e.case == "random")
    assert measure.lower(large, "bfloat16") == 0.0
    (bound,) = checks.bounds("attention", "bfloat16", [ordinary], measure)
    assert 0.0 < measure.lower(ordinary, "bfloat16") < bound.allowed
    overflowing = checks.execute   # a reference whose softmax overflowed: NaN where the spec is finite
    monkeypatch.setattr(checks, "execute", lambda *args, **kw: overflowing(*args, **kw) * np.nan)
    assert measure.lower(large, "bfloat16") == float("inf")


def test_the_large_score_case_draws_a_variant_with_a_softmax():
    """Average pooling runs no softmax: the large-score case of attention pooling draws its options again until
    its variant has one, and where the options fixed rule every softmax out it is an ordinary random example."""
    from formal.sampling.softmaxes import scaled_params
    drawn = [e for seed in range(8) for e in examples("attention_pooling", seed, max_size=4)
             if e.case == LARGE_SCORES]
    assert drawn and all(scaled_params(e.algorithm) for e in drawn)
    from formal.sampling.examples import example
    mean = example("attention_pooling", 0, pins={"large": True}, case=LARGE_SCORES, score="mean")
    assert mean.case == "random" and not mean.large
