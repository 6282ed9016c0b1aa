"""Sizes that grow — a tie (``--size d_attn=d_x**8``) or an option (``n_kv_heads``, which raises H to a multiple
of it) — are evaluated exactly, and what the examples' arrays take is estimated and refused in one line before any
of them is drawn (:mod:`formal.sampling.memory`), for ``conform``, ``verify`` and ``verify --variants`` alike."""

import os
import pickle
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from formal import algorithms
from formal.core.constraints import Constraint
from formal.errors import ConfigError, ResourceError
from formal.guards.limits import memory_limit
from formal.sampling import examples as examples_module
from formal.sampling.examples import example, examples
from formal.sampling.memory import ExamplesTooLarge, argument_bytes, example_bytes
from formal.sampling.sizes import mend_sizes
from formal.sampling.ties import Ties
from formal.sampling.variants import every_variant
from tests.tiers import slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def drawn(monkeypatch):
    """The arrays drawn, counted: a refusal must come before the first."""
    count = {"arrays": 0}
    real, mask = examples_module._real, examples_module._mask

    def counted(function):
        def wrapper(*args, **kwargs):
            count["arrays"] += 1
            return function(*args, **kwargs)
        return wrapper
    monkeypatch.setattr(examples_module, "_real", counted(real))
    monkeypatch.setattr(examples_module, "_mask", counted(mask))
    return count


def test_a_tie_past_any_array_numpy_can_hold_is_refused_by_the_estimate(drawn):
    """d_attn = d_x**64 is 2⁶⁴ or more: numpy cannot even describe W_q (it raised 'Maximum allowed dimension
    exceeded', an internal error); the estimate, in Python ints, refuses it naming the tie and the limit."""
    with pytest.raises(ResourceError) as refused:
        examples("attention", 3, max_size=9, sizes=["d_attn=d_x**64"])
    message = str(refused.value)
    assert "--size d_attn = d_x**64" in message and "W_q" in message and "memory limit" in message
    assert refused.value.needed > 2**64 and drawn["arrays"] == 0


def test_a_tie_that_grows_a_size_is_refused_at_the_limit(drawn):
    """d_attn = d_x**4 (up to 83,521 wide at d_x = 17) fits nowhere in 16 MiB: refused before any array, with the
    size it reaches and why; within a larger limit the same examples are drawn and meet the tie."""
    with memory_limit("16M"), pytest.raises(ResourceError) as refused:
        examples("attention", 6, max_size=17, sizes=["d_attn=d_x**4"])
    message = str(refused.value)
    assert "d_attn set by --size d_attn = d_x**4" in message and "more than the memory limit of 16 MiB" in message
    assert drawn["arrays"] == 0
    with memory_limit("1G"):
        for ex in examples("attention", 2, max_size=5, sizes=["d_attn=d_x**4"]):
            assert ex.sizes["d_attn"] == ex.sizes["d_x"] ** 4


def test_an_option_that_raises_a_size_is_refused_naming_the_option(drawn):
    """n_kv_heads = 1000 raises H to a multiple of it (the constraint n_kv_heads | H): every example holds 1000
    heads; the line names the option, H and the constraint that raised it."""
    with memory_limit("8M"), pytest.raises(ResourceError) as refused:
        examples("mhattention", 4, max_size=9, n_kv_heads=1000, rope=None)   # d_attn free: W_q is the largest
    message = str(refused.value)
    assert "mhattention with n_kv_heads=1000" in message and "H = 1,000" in message
    assert "to meet 1000 divides H" in message and drawn["arrays"] == 0


def test_one_example_is_refused_too(drawn):
    """``example`` (verify's SGD step draws them one by one; the claims' implementation checks) is estimated
    alike."""
    with memory_limit("64K"), pytest.raises(ResourceError, match="drawing the example of mhattention"):
        example("mhattention", 0, small=4, n_kv_heads=1000)
    assert drawn["arrays"] == 0


def test_the_list_is_refused_whole_before_its_first_array(drawn):
    """Each example fits, all of them together do not: the list is held whole, so it is refused before the first
    array — not after half of them were drawn."""
    plan = examples_module._plan("mhattention", 0, small=4, pins=None, case="random", sizes=None, n_kv_heads=64)
    limit = 8 * plan.nbytes
    assert example("mhattention", 0, small=4, n_kv_heads=64)
    drawn["arrays"] = 0
    with memory_limit(limit), pytest.raises(ResourceError, match="examples of mhattention"):
        examples("mhattention", 20, max_size=9, n_kv_heads=64)
    assert drawn["arrays"] == 0


def test_every_variant_verify_checks_is_refused_alike():
    """``verify --variants n_kv_heads=1000000`` draws each variant's examples with the options fixed (its tasks:
    :func:`reference.verification.checks._draw`): every variant is refused by the estimate, none drawn."""
    variants, _ = every_variant("mhattention", {"n_kv_heads": 10**6})
    assert variants
    for options in variants:
        with pytest.raises(ResourceError, match="n_kv_heads=1000000"):
            examples("mhattention", 12, max_size=17, **options)


def test_the_refusal_survives_a_worker_process():
    """A task of ``verify`` runs in a worker process: its refusal is pickled back to the parent whole (a
    ResourceError's keyword-only figures did not unpickle: an internal error instead of the one line)."""
    with pytest.raises(ResourceError) as refused:
        examples("attention", 2, sizes=["d_attn=d_x**64"])
    back = pickle.loads(pickle.dumps(refused.value))
    assert isinstance(back, ExamplesTooLarge)
    assert (str(back), back.needed, back.limit) == (str(refused.value), refused.value.needed, refused.value.limit)


def test_the_estimate_is_the_arrays_the_example_holds():
    """The estimate is the arguments' bytes at their drawn shapes (float64, int64 ids, boolean masks) and the
    largest drawn once more in float64: never less than what the example holds."""
    for name in ("attention", "mhattention", "dtransformer"):
        for ex in examples(name, 3, max_size=9, boundary=False):
            held = sum(v.nbytes for v in ex.arguments.values() if hasattr(v, "nbytes"))
            shapes = {k: v.shape for k, v in ex.arguments.items() if hasattr(v, "shape")}
            assert sum(argument_bytes(ex.algorithm, shapes).values()) == held
            assert example_bytes(ex.algorithm, shapes) >= held


def test_a_constraint_is_mended_in_exact_integers():
    """A divisor past a float's range (10⁴⁰⁰: a float quotient is 0.0, and the size became 0) is met exactly."""
    d_x = sp.Symbol("d_x", integer=True, positive=True)
    mended = mend_sizes(algorithms.get("attention"), {"d_x": 3}, constraints=[Constraint("divides", (10**400, d_x))])
    assert mended["d_x"] == 10**400


def test_a_tie_too_large_to_evaluate_names_the_tie():
    """(d_x**64)**64 at d_x = 17 has more than 10,000 bits: refused naming the tie and the sizes it was
    evaluated at, not as an anonymous formula."""
    ties = Ties.parse(algorithms.get("attention"), ["d_attn=(d_x**64)**64"])
    with pytest.raises(ConfigError, match=r"--size d_attn = \(d_x\*\*64\)\*\*64 at d_x=17: .*10000 bits"):
        ties.apply({"d_x": 17})


def test_a_tie_that_is_not_a_positive_integer_is_refused_before_any_array(drawn):
    """The policy of :mod:`formal.sampling.ties`: a tie is met by construction or the run is refused (never
    filtered) — here d_attn = 5 - ℓ_x, positive for the first examples and 0 or less from ℓ = 5 (the boundary case,
    or a longer random example, whichever the plan meets first): refused, naming the tie and the sizes, before any
    example's arrays are drawn."""
    with pytest.raises(ConfigError, match=r"--size d_attn = 5-ell_x is (0|-\d+) at ell_x=([5-9]): a size must be a "
                                          r"positive"):
        examples("attention", 2, max_size=9, sizes=["d_attn=5-ell_x"])
    assert drawn["arrays"] == 0


def _cli(*argv, timeout=300):
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORMAL_TRANSFORMERS")}
    return subprocess.run([sys.executable, "-m", "formal", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limits, env=env)


@pytest.mark.parametrize("argv, named", [
    (("conform", "examples/attention.py:attention", "--algorithm", "attention", "--size", "d_attn=d_x**64"),
     "--size d_attn = d_x**64"),
    (("conform", "examples/attention.py:attention", "--algorithm", "attention", "--size", "d_attn=d_x**8"),
     "--size d_attn = d_x**8"),
    pytest.param(("conform", "examples/attention.py:attention", "--algorithm", "mhattention", "-o",
                  "n_kv_heads=1000000"), "n_kv_heads=1000000", marks=slow),
    pytest.param(("verify", "--variants", "n_kv_heads=1000000", "--only", "mhattention", "--quiet", "--device",
                  "cpu", "--jobs", "2"), "n_kv_heads=1000000", marks=slow),
])
def test_the_command_line_refuses_in_one_line(argv, named):
    """Through the command line (under a 6 GiB address space, as the bad-input catalogue runs): one line, exit 2,
    the tie or option named, the estimate beside the limit — with verify's tasks in worker processes too."""
    pytest.importorskip("torch")
    done = _cli(*argv)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("formal-transformers: error: drawing the")
    assert named in lines[0] and "more than the memory limit of 4 GiB" in lines[0]


def test_a_list_of_seeded_examples_is_refused_whole():
    """example_list (the SGD step's examples in verify): each example fits, the list together does not, and
    nothing is drawn."""
    from formal.errors import ResourceError
    from formal.guards import limits
    from formal.sampling.examples import example, example_list
    one = example("attention", 0, small=2)
    each = sum(a.nbytes for a in one.arguments.values() if hasattr(a, "nbytes"))
    with limits.memory_limit(max(4 * each, 1024)):
        example("attention", 0, small=2)
        with pytest.raises(ResourceError, match="examples of attention"):
            example_list("attention", range(200), small=2)
    assert [e.sizes for e in example_list("attention", range(3), small=2)] == \
        [example("attention", s, small=2).sizes for s in range(3)]
