"""The claims checker tests itself generatively: claims drawn with their truth known by construction.

Each test draws a subject and its sizes, computes the quantity by a route of its own — a hand-written count of
the weights a GPT-2 block holds, a loop over a causal window's query–key pairs and its closed form at huge n,
the bytes of an odd int4 count rounded up — and then writes the claimed value (and the sizes) in every
spelling a user may: an integer, an integer in a string, a TOML float literal (read as the decimal written), a
decimal string, a formula that evaluates to it, negative, zero, huge; and asserts the verdict of every
assertion kind from exact arithmetic.  A size that is not a positive integer, however spelled, or that breaks
a constraint (ℓ ≤ ℓ_max, d_e divisible by H) makes the claim invalid, never ``holds``.

The same properties run twice: in the fast tier with a small budget, and marked ``slow`` with a large one (a
tier chooses tests: the property is the same).  A failure prints hypothesis's shrunk claim text.  A long run::

    FORMAL_GENERATIVE_EXAMPLES=15000 python -m pytest tests/claims/test_generative.py -m slow
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

from formal.guards.limits import MAX_SIZE
from formal.tools.claims import check_text
from tests.tiers import slow

#: Examples of each property in the fast tier and in the slow one (``FORMAL_GENERATIVE_EXAMPLES=N`` for a longer run).
SMALL, LARGE = 30, int(os.environ.get("FORMAL_GENERATIVE_EXAMPLES", 1500))
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def budgets(prop, large: int = LARGE):
    """Two tests of the property ``prop(data)``: one with a small budget (the fast tier), one with a large budget
    (marked slow)."""
    def test(examples):
        def run(data):
            prop(data)
        run.__doc__ = prop.__doc__
        return settings(max_examples=examples, **_SETTINGS)(given(st.data())(run))
    return test(SMALL), slow(test(large))


# ------------------------------------------------------------------------------------------ spellings
def decimal(value: Fraction) -> str | None:
    """``value`` as a finite decimal, or None where it has none (1/3)."""
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    if q != 1:
        return None
    digits = 0
    while (value * 10**digits).denominator != 1:
        digits += 1
    scaled = abs(value.numerator * 10**digits // value.denominator)
    text = str(scaled).rjust(digits + 1, "0")
    body = f"{text[:-digits]}.{text[-digits:]}" if digits else f"{text}.0"
    return ("-" if value < 0 else "") + body


@st.composite
def spelled(draw, value: Fraction, *, formula: bool = True) -> str:
    """The TOML text of a field holding ``value`` exactly, in one of the spellings a user may write."""
    kinds = ["decimal-string", "fraction-formula"]
    if value.denominator == 1:
        kinds += ["int", "int-string"]
    if decimal(value) is not None:
        kinds += ["toml-float"]
    if formula and value.denominator == 1:
        kinds += ["sum-formula", "product-formula"]
    kind = draw(st.sampled_from(kinds))
    v = int(value) if value.denominator == 1 else None
    if kind == "int":
        return str(v)
    if kind == "int-string":
        return f'"{v}"'
    if kind == "toml-float":
        return decimal(value)
    if kind == "decimal-string":
        text = decimal(value)
        return f'"{text}"' if text is not None else f'"{value.numerator}/{value.denominator}"'
    if kind == "fraction-formula":
        k = draw(st.integers(1, 9))
        return f'"({value.numerator * k})/({value.denominator * k})"'
    if kind == "sum-formula":
        a = draw(st.integers(-10**6, 10**6))
        return f'"{a} + ({v - a})"'
    k = draw(st.sampled_from([d for d in (2, 3, 4, 5, 7) if v % d == 0] or [1]))
    return f'"{k}*({v // k})"'


def toml(**fields) -> str:
    """One ``[[claim]]`` table; each value is TOML text already."""
    return "[[claim]]\nid = \"c\"\n" + "".join(f"{k} = {v}\n" for k, v in fields.items())


def verdict_of(text: str):
    note(text)
    [v] = check_text(text)
    note(f"{v.verdict}: {v.reason}")
    return v


def expected(name: str, derived: Fraction, claimed: Fraction, tolerance: Fraction | None = None) -> str:
    """The verdict of ``name`` on exact numbers."""
    ok = {"equals": derived == claimed, "at_most": derived <= claimed, "at_least": derived >= claimed,
          "approx": tolerance is not None and abs(derived - claimed) <= tolerance}[name]
    return "holds" if ok else "fails"


@st.composite
def claimed_near(draw, derived: int) -> Fraction:
    """A claimed value around ``derived``: equal, one off, a tiny decimal off, negative, zero, huge."""
    kind = draw(st.sampled_from(["equal", "plus-one", "minus-one", "tiny", "negative", "zero", "huge", "half"]))
    tiny = Fraction(1, 10 ** draw(st.integers(1, 25)))
    return {"equal": Fraction(derived), "plus-one": Fraction(derived + 1), "minus-one": Fraction(derived - 1),
            "tiny": derived + draw(st.sampled_from([tiny, -tiny])), "negative": Fraction(-derived),
            "zero": Fraction(0), "huge": Fraction(10 ** draw(st.integers(20, 60))),
            "half": Fraction(2 * derived + 1, 2)}[kind]


@st.composite
def assertion(draw, derived: int) -> tuple:
    """``(fields, verdict)``: one assertion on a claimed value around ``derived``, spelled, with its verdict."""
    claimed = draw(claimed_near(derived))
    name = draw(st.sampled_from(["equals", "at_most", "at_least", "approx"]))
    fields = {name: draw(spelled(claimed))}
    tolerance = None
    if name == "approx":
        tolerance = draw(st.sampled_from([Fraction(0), Fraction(1), Fraction(1, 2), Fraction(999999, 1000000),
                                          Fraction(9999999999999999999, 10**19)]))
        fields["abs_tol"] = draw(spelled(tolerance, formula=False))      # every spelling a tolerance may take
    return fields, expected(name, Fraction(derived), claimed, tolerance)


# ---------------------------------------------------------------------------------------- GPT-2 stacks
def gpt2_params(N_V, ell_max, d_e, L, d_mlp) -> int:
    """An independent count of a GPT-2's weights: token and position tables, per block two layer norms,
    Q, K, V and the output projection with biases, the MLP with biases; a final layer norm; the unembedding
    tied to the token table."""
    attention = 4 * d_e * d_e + 4 * d_e
    mlp = 2 * d_e * d_mlp + d_mlp + d_e
    return N_V * d_e + ell_max * d_e + L * (attention + mlp + 4 * d_e) + 2 * d_e


@st.composite
def gpt2_sizes(draw) -> dict:
    H = draw(st.integers(1, 8))
    return {"N_V": draw(st.integers(1, 60000)), "ell_max": draw(st.integers(1, 4096)),
            "d_e": H * draw(st.integers(1, 64)), "L": draw(st.integers(1, 48)), "H": H,
            "d_mlp": draw(st.integers(1, 4096))}


def _gpt2_params_claim(data):
    sizes = data.draw(gpt2_sizes())
    derived = gpt2_params(sizes["N_V"], sizes["ell_max"], sizes["d_e"], sizes["L"], sizes["d_mlp"])
    fields, want = data.draw(assertion(derived))
    written = ", ".join(f"{k} = {data.draw(spelled(Fraction(v)))}" for k, v in sizes.items())
    v = verdict_of(toml(model='"gpt2"', sizes="{ " + written + " }", quantity='"params.total"', **fields))
    assert v.verdict == want, v.reason


test_a_gpt2_parameter_claim_has_its_verdict, test_a_gpt2_parameter_claim_has_its_verdict_long = \
    budgets(_gpt2_params_claim)


@st.composite
def bad_size(draw) -> tuple:
    """``(TOML text, why)``: a size that is not a positive integer at most 2**50, in some spelling."""
    value = draw(st.sampled_from([Fraction(0), Fraction(-1), Fraction(-12), Fraction(1, 2), Fraction(7, 3),
                                  Fraction(MAX_SIZE + 1), Fraction(2**64), Fraction(-300)]))
    return draw(spelled(value)), value


def _gpt2_bad_size(data):
    sizes = data.draw(gpt2_sizes())
    name = data.draw(st.sampled_from(["N_V", "d_e", "L", "d_mlp", "H"]))
    text, value = data.draw(bad_size())
    written = ", ".join(f"{k} = {text if k == name else v}" for k, v in sizes.items())
    fields, _ = data.draw(assertion(1))
    v = verdict_of(toml(model='"gpt2"', sizes="{ " + written + " }", quantity='"params.total"', **fields))
    assert v.verdict == "invalid", (value, v.reason)


test_a_size_that_is_not_a_positive_integer_is_invalid, test_a_size_that_is_not_a_positive_integer_is_invalid_long = \
    budgets(_gpt2_bad_size)


def _gpt2_field_bad(data):
    """``seq_len``, ``batch`` and ``tokens``: each spelled every way, each refused when not a positive integer,
    and ``seq_len`` past ℓ_max refused however written."""
    field = data.draw(st.sampled_from(["seq_len", "batch", "tokens", "seq_len-past-max"]))
    quantity = {"tokens": '"training.flops"', "batch": '"memory.activations_bytes"'}.get(field, '"flops.forward"')
    if field == "seq_len-past-max":
        text, key = data.draw(spelled(Fraction(data.draw(st.integers(1025, 10**6))))), "seq_len"
    else:
        text, _ = data.draw(bad_size())
        key = field
    fields, _ = data.draw(assertion(1))
    v = verdict_of(toml(model='"gpt2"', **{key: text}, quantity=quantity, **fields))
    assert v.verdict == "invalid", v.reason


test_a_bad_length_batch_or_token_count_is_invalid, test_a_bad_length_batch_or_token_count_is_invalid_long = \
    budgets(_gpt2_field_bad)


def _spelling_never_changes_a_figure(data):
    """The same sizes spelled two ways — integers, or strings, formulas and floats — give one figure; at int4 an
    odd count of weights takes its last byte (whole bytes, as `complexity` counts them), in every spelling."""
    sizes = data.draw(gpt2_sizes())
    if data.draw(st.booleans()):            # an MLP a multiple of d_e wide, so that it may be spelled "4*d_e"
        sizes["d_mlp"] = sizes["d_e"] * data.draw(st.integers(1, 8))
    dtype, width = data.draw(st.sampled_from([("int4", Fraction(1, 2))] * 3 + [("fp32", 4), ("fp16", 2),
                                                                                ("int8", 1)]))
    derived = gpt2_params(sizes["N_V"], sizes["ell_max"], sizes["d_e"], sizes["L"], sizes["d_mlp"]) * width
    derived = -(-derived.numerator // derived.denominator) if isinstance(derived, Fraction) else derived
    mlp = data.draw(st.sampled_from([str(sizes["d_mlp"]), f'"{sizes["d_mlp"]}"'] + (
        [f'"{sizes["d_mlp"] // sizes["d_e"]}*d_e"'] if sizes["d_mlp"] % sizes["d_e"] == 0 else [])))
    written = ", ".join(f"{k} = {mlp if k == 'd_mlp' else data.draw(spelled(Fraction(v)))}" for k, v in sizes.items())
    seq_len = data.draw(spelled(Fraction(data.draw(st.integers(1, sizes["ell_max"])))))
    v = verdict_of(toml(model='"gpt2"', dtype=f'"{dtype}"', seq_len=seq_len, sizes="{ " + written + " }",
                        quantity='"weights.bytes"', equals=str(derived)))
    assert v.verdict == "holds", v.reason


test_a_figure_is_the_same_in_every_spelling, test_a_figure_is_the_same_in_every_spelling_long = \
    budgets(_spelling_never_changes_a_figure)


# ---------------------------------------------------------------------------------------- algorithms
def mhattention_params(H, d_x, d_z, d_attn, d_mid, d_out) -> int:
    """Multi-head attention's weights, counted by hand: per head W_q, W_k (d_attn×d_x, d_attn×d_z) and W_v
    (d_mid×d_z) with biases; the output projection d_out×(H·d_mid) with its bias."""
    return H * (d_attn * d_x + d_attn + d_attn * d_z + d_attn + d_mid * d_z + d_mid) + d_out * H * d_mid + d_out


def _algorithm_claim(data):
    """An algorithm's cost with sizes bound to numbers in any spelling, some as formulas in the others
    (``d_attn = "d_x/H"``): holds or fails by exact arithmetic; a tie that is not a whole size is invalid."""
    sizes = {k: data.draw(st.integers(1, 40)) for k in ("H", "d_z", "d_out")}
    sizes["d_attn"], sizes["d_mid"] = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
    sizes["d_x"] = sizes["H"] * data.draw(st.integers(1, 12))
    written = {k: data.draw(spelled(Fraction(v))) for k, v in sizes.items()}
    tie = data.draw(st.sampled_from(["none", "d_attn", "d_mid-bad"]))
    if tie == "d_attn":                      # a formula in numbers the claim binds: that number
        sizes["d_attn"], written["d_attn"] = sizes["d_x"] // sizes["H"], '"d_x/H"'
    elif tie == "d_mid-bad":                 # d_x/(H + 1) is not whole unless H + 1 divides d_x
        written["d_mid"] = '"d_x/(H + 1)"'
    derived = mhattention_params(**sizes)
    fields, want = data.draw(assertion(derived))
    v = verdict_of(toml(algorithm='"mhattention"', sizes="{ " + ", ".join(f"{k} = {t}" for k, t in written.items())
                        + " }", quantity='"params"', **fields))
    if tie == "d_mid-bad":
        if sizes["d_x"] % (sizes["H"] + 1):
            assert v.verdict == "invalid" and "d_mid" in v.reason, v.reason
        return
    assert v.verdict == want, v.reason


test_an_algorithm_cost_claim_has_its_verdict, test_an_algorithm_cost_claim_has_its_verdict_long = \
    budgets(_algorithm_claim)


def _ratio_to_zero(data):
    """A quantity that is 0 at every size divides nothing: the claim is invalid, whatever it asserts."""
    name = data.draw(st.sampled_from(["equals", "leading", "theta", "at_most"]))
    value = {"leading": '"1"', "theta": '"1"'}.get(name, data.draw(spelled(Fraction(data.draw(st.integers(0, 3))))))
    v = verdict_of(toml(algorithm='"attention"', quantity='"flops"', ratio_to='{ algorithm = "token_embedding" }',
                        **{name: value}))
    assert v.verdict == "invalid" and "is 0" in v.reason, v.reason


test_a_ratio_to_zero_is_invalid, test_a_ratio_to_zero_is_invalid_long = budgets(_ratio_to_zero)


# ---------------------------------------------------------------------------------------------- graphs
def window_edges(n: int, w: int) -> int:
    """A causal window's query–key pairs in closed form: query t reads min(t + 1, w) keys."""
    return n * (n + 1) // 2 if n <= w else w * (w + 1) // 2 + (n - w) * w


def _graph_edges(data):
    """Edges of a causal sliding window: a loop over the pairs at small n, the closed form at huge n (exact:
    no float), each claimed in every spelling."""
    if data.draw(st.booleans()):
        n, w = data.draw(st.integers(1, 60)), data.draw(st.integers(1, 70))
        counted = sum(1 for q in range(n) for k in range(n) if 0 <= q - k < w)
        assert counted == window_edges(n, w)
    else:
        n, w = data.draw(st.integers(10**6, MAX_SIZE)), data.draw(st.integers(1, MAX_SIZE))
    fields, want = data.draw(assertion(window_edges(n, w)))
    v = verdict_of(toml(graph='"sliding-window"', args=f"{{ n = {n}, window = {w} }}", quantity='"edges"', **fields))
    assert v.verdict == want, v.reason


test_a_window_edge_claim_has_its_verdict, test_a_window_edge_claim_has_its_verdict_long = budgets(_graph_edges)


def _bound_n_stays_bound(data):
    """Growth in layers at a sequence length the claim binds: the field stops growing once the sequence's ends
    cut it, so "linear in layers" fails there; with n left out it holds (for a window of at least 2)."""
    w = data.draw(st.integers(2, 10**6))
    bind = data.draw(st.booleans())
    args = f"{{ window = {w}" + (f", n = {data.draw(st.integers(1, MAX_SIZE))}" if bind else "") + " }"
    v = verdict_of(toml(graph='"sliding-window"', args=args, quantity='"layers.receptive_field.max"',
                        theta='"layers"', **{"in": '["layers"]'}))
    assert v.verdict == ("fails" if bind else "holds"), v.reason


test_a_bound_n_stays_bound, test_a_bound_n_stays_bound_long = budgets(_bound_n_stays_bound)


# ------------------------------------------------------------------------------------------ the CLI
def _cli_spelling(data, capsys):
    """``complexity --seq-len`` and ``--batch`` spelled as an integer, a float literal, a formula: one figure."""
    from formal.tools.cli import main
    seq_len, batch = data.draw(st.integers(1, 1024)), data.draw(st.integers(1, 64))

    def run(*flags):
        assert main(["complexity", "gpt2", "--json", *flags]) in (0, None)
        return json.loads(capsys.readouterr().out)

    def spell(v):
        return data.draw(st.sampled_from([str(v), f"{v}.0", f"{v}e0", f"({v})", f"{v} + 0", f"2*{v}/2"]))
    plain = run("--seq-len", str(seq_len), "--batch", str(batch))
    assert run("--seq-len", spell(seq_len), "--batch", spell(batch)) == plain


def test_a_cli_size_means_the_same_in_every_spelling(capsys):
    given(st.data())(settings(max_examples=SMALL, **_SETTINGS)(lambda data: _cli_spelling(data, capsys)))()


@slow
def test_a_cli_size_means_the_same_in_every_spelling_long(capsys):
    given(st.data())(settings(max_examples=LARGE // 5, **_SETTINGS)(lambda data: _cli_spelling(data, capsys)))()


@pytest.mark.parametrize("value", ["1.5", "0", "-3", "2**51", "n", "1/2", "0.5e0", "abc", "1025"])
def test_a_cli_size_that_is_not_a_positive_integer_is_one_line(value, capsys):
    from formal.tools.cli import main
    code = main(["complexity", "gpt2", "--seq-len", value])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and err.startswith("formal-transformers: error:"), err
