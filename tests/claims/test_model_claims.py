"""Model claims through the real ``check`` command: a preset overridden as if the variant were built from
scratch, growth in the batch, weight memory by dtype, training compute for a token budget, and a KV cache that
keeps a sliding window of tokens.  The oracles are the algorithm objects built from scratch with the merged
options and sizes, hand-written formulas, and HF transformers' count of a model built on the meta device."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from formal.algorithms import get as algorithm
from formal.models.presets import PRESETS, resolve_sizes
from formal.tools.cli import main
from tests.claims.test_check import claim
from tests.tiers import slow


def check(tmp_path, capsys, *claims) -> dict:
    """Run ``formal-transformers check FILE --json`` on the claims; id → the claim's JSON row."""
    path = tmp_path / "claims.toml"
    path.write_text("".join(claims), encoding="utf-8")
    main(["check", str(path), "--json"])
    return {row["id"]: row for row in json.loads(capsys.readouterr().out)["claims"]}


def verdict(tmp_path, capsys, **fields) -> dict:
    return check(tmp_path, capsys, claim(**fields))["c"]


def holds_exactly(tmp_path, capsys, value, **fields) -> None:
    """The claim's figure is ``value``: ``equals`` it holds, one more fails."""
    rows = check(tmp_path, capsys, claim(id="at", **fields, equals=str(value)),
                 claim(id="off", **fields, equals=str(value + 1)))
    assert rows["at"]["verdict"] == "holds", rows["at"]["reason"]
    assert rows["off"]["verdict"] == "fails", rows["off"]["reason"]


def scratch(name, options, sizes, seq_len=None):
    """The figures of a preset's variant built from scratch: Algorithm 8/9/10 (or Swin's) built with the
    merged options, at the published sizes it still has, the overrides, and the architecture's rules written
    here from the papers — an MLP of 4·d_model (GPT-2/3, BERT, ViT, the base Transformer), GPT-3's d_head =
    d_model/n_heads where Table 2.1 gives that, the context ℓ_max as the default length (a ViT's ℓ patches,
    Swin's height·width grid)."""
    preset = PRESETS[name]
    rules = {}
    if preset.algorithm != "swin" and not name.startswith("llama"):
        rules["d_mlp"] = lambda s: 4 * s["d_e"]
    if name in ("gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-2.7b", "gpt3-6.7b", "gpt3-175b"):
        rules["d_attn"] = rules["d_mid"] = lambda s: s["d_e"] // s["H"]
    options = {**preset.options, **options}
    built = algorithm(preset.algorithm, **options)
    names = {str(s) for s in built.symbols}
    merged = {k: v for k, v in preset.sizes.items() if k in names and k not in rules}
    merged.update(sizes)
    merged.update({k: f(merged) for k, f in rules.items() if k in names and k not in sizes})
    if seq_len is None:
        seq_len = sizes.get("ell") or (merged["ell_max"] if "ell_max" in merged else preset.seq_len)
    if preset.algorithm == "swin":
        seq_len = None
    cost = built.cost("matmul").evaluate(resolve_sizes(built, merged, seq_len))
    return cost["params"], cost["flops"]


# ------------------------------------------------------------------------------ overrides, case by case
def test_a_variant_without_positions_drops_the_context_size(tmp_path, capsys):
    """T5-style (position = "none"): ℓ_max is not imposed; the base Transformer counted by hand (one shared
    37000 × 512 embedding, post-LN, no final norm)."""
    d, f, V = 512, 2048, 37000
    attention, mlp, norm = 4 * d * d + 4 * d, 2 * d * f + f + d, 2 * d
    by_hand = V * d + 6 * (attention + mlp + 2 * norm) + 6 * (2 * attention + mlp + 3 * norm)
    holds_exactly(tmp_path, capsys, by_hand, model="transformer-base", options={"position": "none"},
                  quantity="params.total")


def test_a_size_the_user_gives_that_the_variant_lacks_is_still_an_error(tmp_path, capsys):
    row = verdict(tmp_path, capsys, model="transformer-base", options={"position": "none"},
                  sizes={"ell_max": 512}, quantity="params.total", approx="63M")
    assert row["verdict"] == "invalid" and "no size 'ell_max'" in row["reason"]


def test_a_new_grid_gives_swin_its_sequence_length(tmp_path, capsys):
    """Swin-B at 384² (Liu et al. 2021, Table 1: 47.0G FLOPs, 88M): a 96×96 grid of 12×12 windows."""
    sizes = {"height": 96, "width": 96, "swin_window": 12}
    params, flops = scratch("swin-b", {}, sizes)
    holds_exactly(tmp_path, capsys, flops, model="swin-b", sizes=sizes, quantity="flops.forward")
    assert verdict(tmp_path, capsys, model="swin-b", sizes=sizes, quantity="flops.forward_macs_per_sequence",
                   approx="47.0G")["verdict"] == "holds"
    row = verdict(tmp_path, capsys, model="swin-b", sizes=sizes, seq_len=3136, quantity="flops.forward",
                  approx="47G")
    assert row["verdict"] == "invalid" and "96×96 = 9216 patches" in row["reason"]


def test_a_vit_length_given_as_a_size_is_its_sequence_length(tmp_path, capsys):
    """ViT-B/16 at 384²: ℓ = 576 patches, every length of the model (the position table too)."""
    params, flops = scratch("vit-b16", {}, {"ell": 576})
    holds_exactly(tmp_path, capsys, flops, model="vit-b16", sizes={"ell": 576}, quantity="flops.forward")
    holds_exactly(tmp_path, capsys, params, model="vit-b16", sizes={"ell": 576}, quantity="params.total")
    row = verdict(tmp_path, capsys, model="vit-b16", sizes={"ell": 576}, seq_len=196, quantity="flops.forward",
                  approx="35G")
    assert row["verdict"] == "invalid" and "ell = 576 and seq_len = 196 disagree" in row["reason"]


def test_derived_sizes_follow_the_sizes_they_derive_from(tmp_path, capsys):
    """GPT-2 small widened to medium's published sizes is GPT-2 medium (d_mlp = 4·d_e follows d_e); a
    longer context ℓ_max is the default length; GPT-3 Small with 6 heads has heads of 768/6 = 128."""
    medium = {"d_e": 1024, "L": 24, "H": 16}
    holds_exactly(tmp_path, capsys, PRESETS["gpt2-medium"].evaluate()["params"], model="gpt2", sizes=medium,
                  quantity="params.total")
    _, flops = scratch("gpt2", {}, {"ell_max": 2048})
    assert flops == scratch("gpt2", {}, {"ell_max": 2048}, seq_len=2048)[1]
    holds_exactly(tmp_path, capsys, flops, model="gpt2", sizes={"ell_max": 2048}, quantity="flops.forward")
    _, flops = scratch("gpt3-125m", {}, {"H": 6})
    holds_exactly(tmp_path, capsys, flops, model="gpt3-125m", sizes={"H": 6}, quantity="flops.forward")


def test_a_head_width_the_table_states_stays(tmp_path, capsys):
    """GPT-3 13B's Table 2.1 gives d_head = 128 with d_model = 5140 (not 5140/40): it is kept when H changes."""
    _, flops = scratch("gpt3-13b", {}, {"H": 20})
    holds_exactly(tmp_path, capsys, flops, model="gpt3-13b", sizes={"H": 20}, quantity="flops.forward")


# ------------------------------------------------------------------------------ overrides, the property
def _override(name):
    """Legal overrides of the preset ``name``: some of its sizes, and an option that removes a size or
    changes a cost (no positions; ReLU)."""
    preset = PRESETS[name]
    alg, sizes = preset.algorithm, preset.sizes
    if alg == "swin":
        return st.fixed_dictionaries({}, optional={
            "grid": st.tuples(st.integers(2, 7), st.integers(1, 2), st.integers(1, 2)),
            "H": st.integers(1, 4), "L_3": st.sampled_from([2, 4, 6])}).map(_grid)
    layers = ("L_enc", "L_dec") if alg == "edtransformer" else ("L",)
    kv = preset.options.get("n_kv_heads") or 1                   # grouped-query: H a multiple of the key/value heads
    optional = {"heads": st.tuples(st.sampled_from([kv * h for h in (1, 2, 4, 8)]), st.integers(1, 24)),
                **{k: st.integers(1, 6) for k in layers}}
    for size, values in (("N_V", st.integers(2, 60000)), ("ell_max", st.integers(4, 4096)),
                         ("ell", st.integers(1, 600)), ("n_classes", st.integers(2, 2000))):
        if size in sizes:
            optional[size] = values
    options = {"position": st.just("none")} if "position" in preset.options and alg != "etransformer" else {}
    if preset.options.get("activation") in ("gelu", "gelu-tanh"):
        options["activation"] = st.just("relu")
    return st.tuples(st.fixed_dictionaries({}, optional=optional),
                     st.fixed_dictionaries({}, optional=options))


def _grid(drawn):
    sizes = {k: v for k, v in drawn.items() if k != "grid"}
    if "grid" in drawn:
        window, a, b = drawn["grid"]
        sizes.update(swin_window=window, height=8 * window * a, width=8 * window * b)
    return sizes, {}


def _sizes(drawn):
    sizes = {k: v for k, v in drawn.items() if k != "heads"}
    if "heads" in drawn:
        heads, width = drawn["heads"]
        sizes.update(H=heads, d_e=2 * heads * width)        # even: a sinusoidal encoding pairs its rows
    return sizes


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([n for n, p in PRESETS.items() if p.seq_len is not None]).flatmap(
    lambda n: st.tuples(st.just(n), _override(n))))
def test_an_override_equals_the_variant_built_from_scratch(case):
    """For any preset and legal overrides of its sizes and options, the claim's parameters and forward FLOPs
    are those of the algorithm built from scratch with the merged options and sizes."""
    from formal.tools.claims import check_text
    name, (drawn, options) = case
    sizes = _sizes(drawn)
    if "position" in options:
        sizes.pop("ell_max", None)              # the variant has no position table to size
    params, flops = scratch(name, options, sizes)
    for quantity, value in (("params.total", params), ("flops.forward", flops)):
        [v] = check_text(claim(model=name, options=options, sizes=sizes, quantity=quantity, equals=str(value)))
        assert v.verdict == "holds", (name, options, sizes, quantity, v.reason)


# ------------------------------------------------------------------------------ batch
def test_growth_in_the_batch(tmp_path, capsys):
    rows = check(tmp_path, capsys,
                 claim(model="gpt2", quantity="flops.forward", theta="batch", **{"in": ["batch"]}),
                 claim(id="one", model="gpt2", quantity="flops.forward", theta="1", **{"in": ["batch"]}),
                 claim(id="p", model="gpt2", quantity="params.total", theta="1", **{"in": ["batch"]}),
                 claim(id="b", model="gpt2", batch="b", quantity="memory.activations_bytes", theta="b",
                       **{"in": ["b"]}))
    assert [rows[k]["verdict"] for k in ("c", "one", "p", "b")] == ["holds", "fails", "holds", "holds"]


def test_a_batch_formula_is_the_batch_times_one_sequence(tmp_path, capsys):
    _, flops = scratch("gpt2", {}, {})
    row = verdict(tmp_path, capsys, model="gpt2", batch="b", quantity="flops.forward", equals=f"{flops}*b")
    assert row["verdict"] == "holds", row["reason"]
    for bad in (0, True, 1.5):
        row = verdict(tmp_path, capsys, model="gpt2", batch=bad, quantity="flops.forward", equals="1")
        assert row["verdict"] == "invalid" and "batch" in row["reason"]


# ------------------------------------------------------------------------------ weight memory
WIDTHS = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "int4": Fraction(1, 2)}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(PRESETS)), st.sampled_from(sorted(WIDTHS)), st.integers(1, 9))
def test_weights_are_the_parameters_at_the_dtype(name, dtype, layers):
    """weights.bytes = ⌈parameters × bytes per scalar⌉ (int4 packs two a byte), for any preset and depth."""
    from formal.tools.claims import check_text
    preset = PRESETS[name]
    sizes = {"L_1": 2 * layers} if preset.algorithm == "swin" else (
        {"d_h": 2 * layers + 1} if "d_h" in preset.sizes else {"L_enc" if "L_enc" in preset.sizes else "L": layers})
    params = check_text(claim(model=name, sizes=sizes, seq_len=preset.seq_len or 20, quantity="params.total",
                              equals="1"))[0].derived
    expected = -(-params * WIDTHS[dtype] // 1)
    [v] = check_text(claim(model=name, sizes=sizes, seq_len=preset.seq_len or 20, dtype=dtype,
                           quantity="weights.bytes", equals=str(expected)))
    assert v.verdict == "holds", v.reason


@slow
def test_opt_13b_against_hf_transformers(tmp_path, capsys):
    """OPT-13B is GPT-3 13B's shape with d_model 5120, ReLU, 50272 tokens and 2050 position rows; HF's
    OPTForCausalLM, built on the meta device (no memory, no weights), counts the same parameters."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.OPTConfig(vocab_size=50272, hidden_size=5120, num_hidden_layers=40, ffn_dim=20480,
                                    num_attention_heads=40, max_position_embeddings=2048,
                                    word_embed_proj_dim=5120)
    with torch.device("meta"):
        model = transformers.OPTForCausalLM(config)
    count = sum(p.numel() for p in model.parameters())
    opt = dict(model="gpt3-13b", options={"activation": "relu"}, sizes={"d_e": 5120, "N_V": 50272, "ell_max": 2050},
               seq_len=2048)
    holds_exactly(tmp_path, capsys, count, quantity="params.total", **opt)
    holds_exactly(tmp_path, capsys, 2 * count, quantity="weights.bytes", dtype="fp16", **opt)
    row = verdict(tmp_path, capsys, quantity="weights.bytes", dtype="fp16", approx="26 GB", **opt)
    assert row["verdict"] == "holds", row["reason"]


def test_complexity_prints_the_weights(capsys):
    assert main(["complexity", "gpt2", "--dtype", "int8", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["weights"] == {"bytes": report["params"]["total"]}
    assert main(["complexity", "gpt2", "--dtype", "bf16"]) == 0
    assert f"weights             {2 * report['params']['total']:,} bytes" in capsys.readouterr().out


# ------------------------------------------------------------------------------ training compute
def test_training_compute_is_the_per_token_step_times_the_tokens(tmp_path, capsys):
    """training.flops = flops.training_step_per_token × tokens at the context length: linear in the tokens,
    and for GPT-3 175B at 300B tokens a little above Table D.1's 6·N·D (the attention's FLOPs)."""
    from formal.tools.claims import check_text
    [v] = check_text(claim(model="gpt3-175b", quantity="flops.training_step_per_token", equals="1"))
    step = Fraction(str(v.derived))
    holds_exactly(tmp_path, capsys, step * 300 * 10**9, model="gpt3-175b", tokens="300B", quantity="training.flops")
    holds_exactly(tmp_path, capsys, step * 3 * 10**11, model="gpt3-175b", tokens=3 * 10**11,
                  quantity="training.flops")
    params = PRESETS["gpt3-175b"].evaluate()["params"]
    assert 6 * params < step < Fraction(104, 100) * 6 * params
    row = verdict(tmp_path, capsys, model="gpt3-175b", tokens="300B", quantity="training.flops", approx="3.14e23")
    assert row["verdict"] == "fails"
    row = verdict(tmp_path, capsys, model="gpt2", tokens="D", quantity="training.flops", theta="D", **{"in": ["D"]})
    assert row["verdict"] == "holds", row["reason"]


@pytest.mark.parametrize("fields, words", [
    ({"tokens": "300 GB"}, "whole number of tokens"),
    ({"tokens": "1.5"}, "whole number of tokens"),
    ({"tokens": 0}, "positive integer"),
    ({}, "give tokens"),
    ({"tokens": "300B", "batch": 8}, "batch does not apply"),
])
def test_training_compute_refuses_what_it_cannot_count(tmp_path, capsys, fields, words):
    row = verdict(tmp_path, capsys, model="gpt2", quantity="training.flops", approx="1e20", **fields)
    assert row["verdict"] == "invalid" and words in row["reason"], row["reason"]


def test_tokens_go_with_training_figures_only(tmp_path, capsys):
    row = verdict(tmp_path, capsys, model="gpt2", tokens="300B", quantity="params.total", approx="124M")
    assert row["verdict"] == "invalid" and "tokens goes with" in row["reason"]


# ------------------------------------------------------------------------------ a sliding-window KV cache
def test_a_rolling_buffer_is_eight_times_smaller_at_32k(tmp_path, capsys):
    """Mistral 7B, §2: W = 4096 at 32k tokens; the cache equals the full one up to W, and stops growing."""
    full = {"model": "llama-2-7b", "seq_len": 32768}
    row = verdict(tmp_path, capsys, **full, kv_window=4096, quantity="kv_cache.bytes", ratio_to=full, equals="1/8")
    assert row["verdict"] == "holds", row["reason"]
    short = {"model": "llama-2-7b", "seq_len": 4096}
    row = verdict(tmp_path, capsys, **short, kv_window=4096, quantity="kv_cache.bytes", ratio_to=short, equals="1")
    assert row["verdict"] == "holds", row["reason"]
    rows = check(tmp_path, capsys,
                 claim(model="llama-2-7b", kv_window=4096, quantity="kv_cache.bytes", theta="1", **{"in": ["ell"]}),
                 claim(id="f", model="llama-2-7b", quantity="kv_cache.bytes", theta="1", **{"in": ["ell"]}))
    assert (rows["c"]["verdict"], rows["f"]["verdict"]) == ("holds", "fails")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.sampled_from(sorted(WIDTHS)), st.integers(1, 4))
def test_a_windowed_cache_holds_min_of_length_and_window(ell, window, dtype, batch):
    """kv_cache.bytes = batch × 2 (keys and values) × L × H × d_head × bytes × min(ℓ, W) for Llama 2 7B."""
    from formal.tools.claims import check_text
    expected = batch * -(-2 * 32 * 32 * 128 * min(ell, window) * WIDTHS[dtype] // 1)
    [v] = check_text(claim(model="llama-2-7b", seq_len=ell, kv_window=window, dtype=dtype, batch=batch,
                           quantity="kv_cache.bytes", equals=str(expected)))
    assert v.verdict == "holds", v.reason


@pytest.mark.parametrize("fields, words", [
    ({"kv_window": 4096, "quantity": "flops.forward"}, "goes with the KV cache"),
    ({"kv_window": 0, "quantity": "kv_cache.bytes"}, "positive integer"),
    ({"kv_window": "W", "quantity": "kv_cache.bytes"}, "positive integer"),
])
def test_a_window_refuses_what_it_does_not_change(tmp_path, capsys, fields, words):
    row = verdict(tmp_path, capsys, model="llama-2-7b", approx="1", **fields)
    assert row["verdict"] == "invalid" and words in row["reason"], row["reason"]


def test_complexity_takes_a_kv_window(capsys):
    assert main(["complexity", "llama-2-7b", "--seq-len", "32768", "--kv-window", "4096", "--json"]) == 0
    cache = json.loads(capsys.readouterr().out)["kv_cache"]
    assert cache["bytes_per_sequence"] == 4096 * cache["bytes_per_token"] and cache["window"] == 4096
    assert main(["complexity", "bert-base", "--kv-window", "4"]) == 2
    assert "has no KV cache" in capsys.readouterr().err


def test_a_config_length_given_as_a_size_is_its_default(tmp_path, capsys):
    """A configuration file's ℓ (a ViT's patches) is its default sequence length, not replaced by another."""
    path = tmp_path / "vit.toml"
    path.write_text('algorithm = "etransformer"\n[options]\ninputs = "patches"\nhead = "classifier"\n[sizes]\n'
                    'd_patch = 768\nell = 576\nn_classes = 1000\nd_e = 768\nL = 12\nH = 12\nd_mlp = 3072\n')
    assert main(["complexity", "--config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seq_len"] == 576
    path.write_text("seq_len = 196\n" + path.read_text())
    assert main(["complexity", "--config", str(path)]) == 2
    assert "ell = 576 and seq_len = 196 disagree" in capsys.readouterr().err


def test_a_paged_cache_takes_the_variant_and_no_window(tmp_path, capsys):
    """Paged figures read the variant too: GPT-2 with a 2048-token context caches 2048 tokens by default, in
    2048/16 blocks; a rolling window is not a paged cache's."""
    row = verdict(tmp_path, capsys, model="gpt2", sizes={"ell_max": 2048}, paged={"block": 16},
                  quantity="kv_paged.blocks", equals="128")
    assert row["verdict"] == "holds", row["reason"]
    row = verdict(tmp_path, capsys, model="gpt2", kv_window=64, paged={"block": 16}, quantity="kv_paged.blocks",
                  equals="4")
    assert row["verdict"] == "invalid" and "kv_window does not apply" in row["reason"], row["reason"]
