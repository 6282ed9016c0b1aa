"""The command line: `list` and `show`, one-line errors with exit status 2, never a traceback."""

import argparse
import json
import re
import subprocess
import sys

import pytest
import sympy as sp

import formal
from formal import ConfigError
from formal.core.symbols import dim
from formal.tools.arguments import bounded_int
from formal.tools.cli import main
from tests.tiers import fast_few, in_fast_tier, slow


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_list_names_every_algorithm(capsys):
    status, out, _ = run(capsys, "list")
    assert status == 0
    for algorithm in formal.ALGORITHMS.values():
        assert algorithm.name in out


def test_list_json(capsys):
    status, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)["algorithms"]
    assert sorted({r["number"] for r in rows if r["number"] is not None}) == list(range(1, 16))
    outside = [r for r in rows if r["number"] is None]  # the lecture notes' systems name where they come from
    assert outside and all(r["source"] for r in outside)
    assert all(r["source"] == "" for r in rows if r["number"] is not None)
    rope = {"rope", "rope_theta", "rope_fraction", "rope_scaling", "rope_factor", "rope_original", "rope_low",
            "rope_high", "rope_beta_fast", "rope_beta_slow"}
    assert rows[4]["options"].keys() == {"bias", "empty", "n_kv_heads", "score_bias", "score_cap", "qk_norm",
                                         "qk_eps"} | rope


def _parse(expr: str):
    """Parse a JSON dim string without evaluating text: only integers, symbols, +, * and integer powers **."""
    terms = []
    for term in expr.replace(" ", "").replace("**", "^").replace("-", "+-").split("+"):
        if not term:
            continue
        factor = sp.Integer(1)
        for part in term.split("*"):
            sign = -1 if part.startswith("-") else 1
            base, _, power = part.lstrip("-").partition("^")
            value = sp.Integer(int(base)) if base.isdigit() else dim(base)
            factor *= sign * value ** (int(power) if power else 1)
        terms.append(factor)
    return sp.Add(*terms)


@pytest.mark.parametrize("name", fast_few(list(formal.ALGORITHMS), keep=in_fast_tier))
def test_show_json_has_the_signature_and_costs(capsys, name):
    status, out, _ = run(capsys, "show", name, "--json")
    assert status == 0
    data = json.loads(out)
    algorithm = formal.ALGORITHMS[name]
    assert data["number"] == algorithm.number and data["name"] == name
    assert set(data) >= {"inputs", "params", "outputs", "cost"}
    assert data["params"] == {p.name: [str(d) for d in p.shape] for p in algorithm.params}
    assert set(data["cost"]) >= {"params", "flops", "memory"}
    assert sp.expand(_parse(data["cost"]["params"]) - algorithm.param_count()) == 0


def test_show_mhattention_json_shapes(capsys):
    _, out, _ = run(capsys, "show", "mhattention", "--json")
    data = json.loads(out)
    assert data["outputs"] == {"V_tilde": ["d_out", "ell_x"]}
    assert data["params"]["W_o"] == ["d_out", "H*d_mid"]
    assert data["params"]["W_q"] == ["H", "d_attn", "d_x"]


def test_show_text_is_numbered_pseudocode_with_shapes_and_totals(capsys):
    status, out, _ = run(capsys, "show", "attention")
    assert status == 0
    assert "Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask)" in out
    for number, text in [(1, "Q ← W_q X + b_q1ᵀ"), (4, "S ← Kᵀ Q"), (5, "if ¬Mask[t_z, t_x]"),
                         (6, "return Ṽ = V softmax(S/√d_attn)")]:
        assert any(line.lstrip().startswith(f"{number}  ") and text in line for line in out.splitlines())
    assert "Totals (matmul convention)" in out and "Θ(" in out


def test_show_convention_full_differs(capsys):
    _, matmul, _ = run(capsys, "show", "attention", "--json")
    _, full, _ = run(capsys, "show", "attention", "--json", "--convention", "full")
    assert json.loads(matmul)["cost"]["flops"] != json.loads(full)["cost"]["flops"]


def test_show_latex_is_balanced(capsys):
    status, out, _ = run(capsys, "show", "mhattention", "--latex")
    assert status == 0
    # one numbered \State per line, as the paper numbers them (algpseudocode's \EndFor would not be numbered)
    assert out.count(r"\State ") == 4 and r"\State \textbf{for} $h \in [H]$" in out and r"\EndFor" not in out
    first, rest = out.split("\n", 1)
    assert first == r"% \usepackage{amsmath,amssymb,algorithm,algpseudocode}"   # what a document needs
    assert rest.startswith(r"\begin{algorithm}") and r"\end{algorithm}" in out
    assert out.rstrip().endswith(r"\end{tabular}")   # the options, after the algorithm


def test_show_params_lists_canonical_names(capsys):
    status, out, _ = run(capsys, "show", "mhattention", "--params")
    assert status == 0
    assert "W_q" in out and "H×d_attn×d_x" in out
    status, out, _ = run(capsys, "show", "mhattention", "--params", "--json", "-o", "n_kv_heads=1")
    data = json.loads(out)
    assert data["params"]["W_k"]["shape"] == ["1", "d_attn", "d_z"]


def test_show_variant_options(capsys):
    _, out, _ = run(capsys, "show", "layer_norm", "-o", "norm=rms", "-o", "eps=1e-5", "--json")
    data = json.loads(out)
    assert data["options"] == {"norm": "rms", "eps": 1e-5} and "beta" not in data["params"]


def test_show_option_value_none_names_a_variant(capsys):
    """``position=none`` is the variant without positional embedding, not Python's None."""
    status, out, _ = run(capsys, "show", "dtransformer", "-o", "position=none", "--json")
    assert status == 0 and "W_p" not in json.loads(out)["params"]


@pytest.mark.parametrize("argv, message", [
    (["show", "nope"], "unknown algorithm 'nope'"),
    (["show", "attention", "--bogus"], "unrecognized arguments: --bogus"),
    (["show", "attention", "--convention", "flops"], "invalid choice: 'flops'"),
    (["show", "attention", "-o", "heads=2"], "no option 'heads'"),
    (["show", "attention", "-o", "bias"], "must be KEY=VALUE"),
    (["show", "layer_norm", "-o", "eps=-1"], "eps = -1"),
    (["show", "attention", "--json", "--latex"], "not allowed with"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
    # integer options are parsed with their bounds (bounded_int): a usage error, never a traceback
    (["complexity", "gpt2", "--seq-len", "-1"], "argument --seq-len: -1 must be an integer from 1 to"),
    (["complexity", "gpt2", "--seq-len", "1.5"], "argument --seq-len: '1.5' must be an integer from 1 to"),
    (["complexity", "gpt2", "--seq-len", "9" * 30], "must be an integer from 1 to 1125899906842624"),
    (["complexity", "gpt2", "--batch", "0"], "argument --batch: 0 must be an integer from 1 to"),
    (["complexity", "gpt2", "--batch", "lots"], "argument --batch: 'lots' must be an integer from 1 to"),
    # flags that would change nothing are refused rather than ignored
    (["show", "attention", "--params", "--convention", "full"], "--convention applies to costs"),
    (["show", "attention", "--latex", "--convention", "kaplan"], "which --latex does not print"),
    (["complexity", "gpt2", "--symbolic", "--seq-len", "5"], "--seq-len has no effect with --symbolic"),
    (["complexity", "gpt2", "--symbolic", "--dtype", "bf16"], "--dtype has no effect with --symbolic"),
    (["complexity", "--list", "gpt2"], "a preset name has no effect with --list"),
    # -o values are typed by the option they set
    (["show", "attention", "-o", "bias=1"], "option bias of attention takes true or false, got '1'"),
    (["show", "attention", "-o", "bias=true", "-o", "bias=false"], "option 'bias' is given twice"),
    (["show", "layer_norm", "-o", "eps=small"], "option eps of layer_norm takes a number, got 'small'"),
    (["show", "layer_norm", "-o", "eps=nan"], "eps = nan must be a finite number"),
    (["show", "attention", "-o", "empty=NaN"],
     "option empty of attention takes zero, nan, error or uniform, got 'NaN'"),
    (["graph", "random", "--seq-len", "64", "--random", "2", "--seed", "-1"],
     "argument --seed: -1 must be a non-negative integer"),
])
def test_bad_usage_prints_one_line_and_exits_2(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert err.startswith("formal-transformers: error:")


@pytest.mark.parametrize("minimum, maximum, text, value", [
    (0, None, "0", 0), (0, None, " 12 ", 12), (1, None, "1", 1), (-3, 3, "-3", -3), (-3, 3, "3", 3),
    (1, None, "1.0", 1), (1, None, "2**10", 1024), (1, None, "1e3", 1000), (1, None, "0 + 7", 7),
])
def test_bounded_int_parses_integers_within_its_bounds(minimum, maximum, text, value):
    assert bounded_int(minimum, maximum)(text) == value


@pytest.mark.parametrize("minimum, maximum, text, message", [
    (0, None, "-1", "-1 must be a non-negative integer"), (1, None, "0", "0 must be a positive integer"),
    (2, None, "1", "1 must be an integer ≥ 2"), (1, 8, "9", "9 must be an integer from 1 to 8"),
    (0, None, "1.5", "'1.5' must be a non-negative integer"), (0, None, "", "'' must be a non-negative integer"),
    (1, 8, "2**4", "'2**4' is 16, which must be an integer from 1 to 8"),
    (1, None, "n", "'n' must be a positive integer"),
    (0, None, "0x10", "'0x10' must be"), (0, None, "9" * 5000, "must be a non-negative integer"),
])
def test_bounded_int_rejects_the_rest_in_one_line(minimum, maximum, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)) as caught:
        bounded_int(minimum, maximum)(text)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


@pytest.mark.parametrize("minimum, maximum", [(1.5, None), (True, None), (3, 2), (0, "9")])
def test_bounded_int_with_bad_bounds_is_a_config_error(minimum, maximum):
    with pytest.raises(ConfigError, match="bounded_int"):
        bounded_int(minimum, maximum)


@slow
def test_python_dash_m_formal_works_as_a_process():
    """`python -m formal show attention --json` runs as a whole process; a bad name exits 2 without a
    traceback."""
    good = subprocess.run([sys.executable, "-m", "formal", "show", "attention", "--json"],
                          capture_output=True, text=True, check=False)
    assert good.returncode == 0 and json.loads(good.stdout)["number"] == 4
    bad = subprocess.run([sys.executable, "-m", "formal", "show", "nope"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.splitlines()) == 1


def test_a_documented_text_value_that_looks_like_a_number_is_kept_as_text(capsys):
    """``-o empty=nan`` chooses the documented policy "nan" (the value parser once made it a float)."""
    status, out, _ = run(capsys, "show", "attention", "-o", "empty=nan", "--json")
    assert status == 0 and json.loads(out)["options"]["empty"] == "nan"


def test_show_params_latex_is_a_tabular_of_every_parameter(capsys):
    status, out, _ = run(capsys, "show", "mhattention", "--params", "--latex")
    assert status == 0 and out.startswith(r"\begin{tabular}") and out.rstrip().endswith(r"\end{tabular}")
    for name in formal.mhattention.params:
        assert f"${name.name[0]}_" in out or name.name in out
    assert "total" in out and "query weights" in out


def test_complexity_says_when_the_sequence_length_changes_the_parameters(capsys):
    """ViT's position table has a column per patch: another --seq-len is another model, and says so with
    both counts; a model whose table is fixed (GPT-2) prints no note."""
    from formal.models.presets import get
    status, out, _ = run(capsys, "complexity", "vit-b16", "--seq-len", "1000")
    base = get("vit-b16").evaluate()["params"]
    assert status == 0 and "note: the parameters change with the sequence length (W_p" in out
    assert f"{base:,} at vit-b16's 196" in out
    status, out, _ = run(capsys, "complexity", "gpt2", "--seq-len", "100")
    assert status == 0 and "note" not in out


def test_complexity_marks_a_rounded_per_token_figure(capsys):
    status, out, _ = run(capsys, "complexity", "vit-b16", "--seq-len", "1000")
    assert "≈208,158,130.2 per token" in out
    status, out, _ = run(capsys, "complexity", "gpt2", "--seq-len", "1000")
    assert "≈" not in out


def test_complexity_of_a_captioner_needs_the_captions_length(capsys):
    """Show-Attend-Tell has no context length: without --seq-len complexity says so in one line (exit 2);
    with it, the figures are the derived ones at that caption length, and the parameters do not move."""
    from formal.models.presets import get
    status, _, err = run(capsys, "complexity", "show-attend-tell-coco")
    assert status == 2 and err.strip().splitlines() == [
        "formal-transformers: error: show-attend-tell-coco has no default sequence length: give --seq-len T"]
    for words in (5, 16):
        status, out, _ = run(capsys, "complexity", "show-attend-tell-coco", "--seq-len", str(words), "--json")
        result, want = json.loads(out), get("show-attend-tell-coco").evaluate(seq_len=words)
        assert status == 0 and result["params"]["total"] == want["params"]
        assert result["flops"]["forward_per_sequence"] == want["flops"]


def test_complexity_takes_a_sequence_model_from_a_config(capsys, tmp_path):
    """A seq2seq configuration (RNNsearch's sizes) is reported like a preset: its source and target length are
    both the --seq-len, and the count is the object's."""
    from formal import algorithms
    from formal.core.symbols import by_name
    config = tmp_path / "rnnsearch.toml"
    config.write_text('algorithm = "seq2seq"\nseq_len = 50\n[options]\nattention = "bahdanau"\n'
                      "[sizes]\nN_V = 30000\nd_e = 620\nd_h = 1000\nd_a = 1000\n")
    status, out, _ = run(capsys, "complexity", "--config", str(config), "--json")
    sizes = {"N_V": 30000, "d_e": 620, "d_h": 1000, "d_a": 1000, "ell_x": 50, "ell_z": 50}
    assert status == 0
    count = algorithms.get("seq2seq", attention="bahdanau").param_count()
    assert json.loads(out)["params"]["total"] == count.xreplace({by_name(k): v for k, v in sizes.items()})


def test_complexity_list_json(capsys):
    from formal.models.presets import PRESETS
    status, out, _ = run(capsys, "complexity", "--list", "--json")
    assert status == 0 and [p["name"] for p in json.loads(out)["presets"]] == list(PRESETS)


def test_an_exception_escaping_a_command_is_one_line_and_exit_1(capsys, monkeypatch):
    """The guard of last resort: a bug is reported as an internal error in one line, exit 1 — never a
    traceback; FORMAL_TRANSFORMERS_TRACEBACK=1 lets it through for debugging."""
    import formal.tools.cli as cli

    def broken(args, out):
        raise KeyError("surprise")

    def hungry(args, out):
        raise MemoryError

    real = cli.build_parser

    def parser_with(run_):
        def build():
            parser = real()
            parser.set_defaults(run=run_)
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            for p in sub.choices.values():
                p.set_defaults(run=run_)
            return parser
        return build

    monkeypatch.delenv("FORMAL_TRANSFORMERS_TRACEBACK", raising=False)
    monkeypatch.setattr(cli, "build_parser", parser_with(broken))
    status, out, err = run(capsys, "list")
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "internal error: KeyError: 'surprise'" in err and "please report it" in err
    monkeypatch.setattr(cli, "build_parser", parser_with(hungry))
    status, out, err = run(capsys, "list")
    assert status == 1 and err.startswith("formal-transformers: error: out of memory")
    monkeypatch.setattr(cli, "build_parser", parser_with(broken))
    monkeypatch.setenv("FORMAL_TRANSFORMERS_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["list"])


@pytest.mark.parametrize("size", [2**50 + 1, 10**400])
def test_a_configuration_size_past_2_to_the_50_is_refused(capsys, tmp_path, size):
    """Sizes are capped where every derived figure still prints (Python will not print an integer of more
    than 4300 digits); the message does not print the number either."""
    config = tmp_path / "big.toml"
    config.write_text(f'algorithm = "dtransformer"\n[sizes]\nN_V = {size}\n')
    status, out, err = run(capsys, "complexity", "--config", str(config))
    assert status == 2 and "must be a positive integer at most 2**50" in err and len(err) < 300


def test_complexity_of_a_paged_kv_cache(capsys):
    """--kv paged: GPT-2 at 100 tokens in blocks of 16 — the block count, the unused slots and the shared
    prompt counted on a PagedCache that was given the tokens, the bytes per block as 16 tokens of every
    layer's keys and values (2·L·d_e scalars of 4 bytes), the reservation GPT-2's 1024 positions."""
    import numpy as np

    from formal.algorithms.paged import PagedCache
    status, out, _ = run(capsys, "complexity", "gpt2", "--seq-len", "100", "--kv", "paged", "--block", "16",
                         "--samples", "4", "--json")
    paged = json.loads(out)["kv_cache"]["paged"]
    cache = PagedCache(64, 16, 1, 1, 1)
    prompt = cache.new()
    cache.append(prompt, np.zeros((1, 1, 100)), np.zeros((1, 1, 100)))
    assert status == 0
    assert (paged["blocks"], paged["wasted_slots"]) == (len(cache.table(prompt)), cache.waste(prompt)) == (7, 12)
    samples = [cache.fork(prompt) for _ in range(4)]
    cache.free(prompt)
    for s in samples:
        cache.append(s, np.zeros((1, 1, 1)), np.zeros((1, 1, 1)))
    assert paged["shared_prompt_blocks"] == cache.blocks_in_use == 10 and paged["unshared_prompt_blocks"] == 28
    assert paged["bytes_per_block"] == 16 * 2 * 12 * 768 * 4
    assert paged["reserved_waste"] == 1024 - 100 and paged["reserved_waste_bytes"] == 924 * 2 * 12 * 768 * 4


@pytest.mark.parametrize("args, message", [
    (["gpt2", "--block", "16"], "--block has no effect with --kv contiguous"),
    (["gpt2", "--samples", "2"], "--samples has no effect with --kv contiguous"),
    (["bert-base", "--kv", "paged"], "--kv paged: bert-base (etransformer) has no KV cache here"),
    (["gpt2", "--kv", "paged", "--symbolic"], "--kv paged prints numbers: it has no effect with --symbolic"),
    (["gpt2", "--kv", "paged", "--block", "0"], "argument --block"),
    (["gpt2", "--kv", "paged", "--samples", "0"], "argument --samples"),
])
def test_complexity_paged_bad_usage_is_one_line_and_exit_2(capsys, args, message):
    status, _, err = run(capsys, "complexity", *args)
    assert status == 2 and len(err.strip().splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("argv", [
    ("complexity", "gpt2", "--seq-len", "10", "--seq-len", "12"),
    ("complexity", "gpt2", "--seq-len=10", "--seq-len", "10"),
    ("graph", "full", "--seq-len", "4", "--seq-len", "4"),
    ("complexity", "gpt2", "--dtype", "fp16", "--dtype", "int8"),
])
def test_an_option_given_twice_is_refused(capsys, argv):
    """A second value would silently replace the first (a flag with no effect): one line, exit 2, naming both."""
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and "is given twice" in err and len(err.strip().splitlines()) == 1, err


def test_a_repeatable_option_may_be_repeated(capsys):
    status, out, err = run(capsys, "show", "mhattention", "-o", "bias=false", "-o", "n_kv_heads=2", "--json")
    assert status == 0 and err == "", err


def test_one_parser_parses_many_command_lines_each_on_its_own():
    """What an option was given is recorded per parse, not by a namespace's id (which Python reuses once a
    namespace is gone: a second parse was once refused as the option "given twice")."""
    from formal.tools.cli import build_parser
    parser = build_parser()
    for length in range(1, 200):
        args = parser.parse_args(["complexity", "gpt2", "--seq-len", str(length)])
        assert args.seq_len == length and not any(k.startswith("_") for k in vars(args))
