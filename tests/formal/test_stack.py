"""Algorithms 8–15 and the presets: properties beyond derived = executed (tests/formal/test_derived_vs_executed.py)."""

import os

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

import formal
from formal import algorithms
from formal.core.shapes import Binding
from formal.core.symbols import H, L, by_name, d_attn, d_e, d_mid, d_mlp, n_steps
from formal.costs.asymptotics import leading_term
from formal.models import presets
from formal.models.complexity import Model
from formal.tools.cli import main
from tests.oracles.flops import tallied_run
from tests.strategies.cases import evaluate
from tests.strategies.stacks import dtransformer_cases, edinference_cases, edtransformer_cases, etransformer_cases
from tests.tiers import slow

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _hf_count(cls, config):
    """Parameters of an HF transformers model built on the meta device, a tied matrix counted once."""
    import torch
    with torch.device("meta"):
        model = cls(config)
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def _hf_models():
    transformers = pytest.importorskip("transformers")
    T = transformers
    gpt2 = {n: (T.GPT2LMHeadModel, T.GPT2Config(n_embd=e, n_layer=l, n_head=h))
            for n, (e, l, h) in {"gpt2": (768, 12, 12), "gpt2-medium": (1024, 24, 16), "gpt2-large": (1280, 36, 20),
                                 "gpt2-xl": (1600, 48, 25)}.items()}
    bert = {"bert-base": (T.BertForMaskedLM, T.BertConfig()),
            "bert-large": (T.BertForMaskedLM, T.BertConfig(hidden_size=1024, num_hidden_layers=24,
                                                           num_attention_heads=16, intermediate_size=4096))}
    llama = {"llama-2-7b": (T.LlamaForCausalLM, T.LlamaConfig(
        vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
        num_key_value_heads=32, max_position_embeddings=4096))}
    vit = {n: (T.ViTForImageClassification, T.ViTConfig(hidden_size=e, num_hidden_layers=l, num_attention_heads=h,
                                                        intermediate_size=m, patch_size=p, image_size=224,
                                                        num_labels=1000))
           for n, (e, l, h, m, p) in {"vit-b16": (768, 12, 12, 3072, 16), "vit-l16": (1024, 24, 16, 4096, 16),
                                      "vit-h14": (1280, 32, 16, 5120, 14)}.items()}
    return {**gpt2, **bert, **llama, **vit}


HF_PRESETS = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large", "llama-2-7b",
              "vit-b16", "vit-l16", "vit-h14"]


@pytest.mark.parametrize("name", HF_PRESETS)
def test_preset_parameters_equal_hf_transformers(name):
    """Item 4: each preset's derived parameter count equals the HF transformers model's, exactly."""
    cls, config = _hf_models()[name]
    assert presets.get(name).evaluate()["params"] == _hf_count(cls, config)


def _gpt3_oracle(L_, d, H_, dh, vocab=50257, ctx=2048):
    """GPT-2 architecture (Radford et al. 2019) written out by hand: tied W_e, learned W_p, per layer two
    layer norms, Q/K/V/O with biases, a 4d MLP with biases; a final layer norm."""
    attention = 3 * (d * H_ * dh + H_ * dh) + (H_ * dh * d + d)
    mlp = d * 4 * d + 4 * d + 4 * d * d + d
    return vocab * d + ctx * d + L_ * (attention + mlp + 4 * d) + 2 * d


@pytest.mark.parametrize("name, config", [
    ("gpt3-125m", (12, 768, 12, 64)), ("gpt3-350m", (24, 1024, 16, 64)), ("gpt3-760m", (24, 1536, 16, 96)),
    ("gpt3-1.3b", (24, 2048, 24, 128)), ("gpt3-2.7b", (32, 2560, 32, 80)), ("gpt3-6.7b", (32, 4096, 32, 128)),
    ("gpt3-13b", (40, 5140, 40, 128)), ("gpt3-175b", (96, 12288, 96, 128))])
def test_gpt3_parameters_equal_independent_formula(name, config):
    """Item 4: GPT-3 (Brown et al. 2020, Table 2.1) has no public implementation: an independent count."""
    assert presets.get(name).evaluate()["params"] == _gpt3_oracle(*config)


def test_transformer_base_parameters_equal_independent_formula():
    """Vaswani et al. 2017: one shared embedding (also the pre-softmax matrix), sinusoidal positions,
    6 encoder layers (self-attention, MLP, two norms) and 6 decoder layers (two attentions, MLP, three)."""
    d, ff, vocab = 512, 2048, 37000
    attention, mlp, norm = 4 * (d * d + d), 2 * d * ff + ff + d, 2 * d
    expected = vocab * d + 6 * (attention + mlp + 2 * norm) + 6 * (2 * attention + mlp + 3 * norm)
    assert presets.get("transformer-base").evaluate()["params"] == expected


def test_every_preset_names_its_paper_number():
    for p in presets.PRESETS.values():
        assert "reports" in p.doc, p.name


def test_kaplan_leading_term_of_non_embedding_parameters():
    """Kaplan et al. 2020: N ≈ 12·L·d_e² when d_mlp = 4·d_e and H·d_attn = H·d_mid = d_e."""
    non_embedding = Model("dtransformer", {}).params()["non_embedding"]
    substituted = sp.expand(non_embedding.xreplace({d_mlp: 4 * d_e, d_attn: d_e / H, d_mid: d_e / H}))
    assert leading_term(substituted, [d_e]) == 12 * L * d_e ** 2


def _column_stochastic(p):
    return np.all(p >= 0) and np.allclose(p.sum(axis=0), 1.0)


@given(dtransformer_cases())
def test_dtransformer_is_column_stochastic_and_causal(case):
    """Algorithm 10: each column of P is a distribution, and column t does not depend on tokens after t."""
    p = case.algorithm(**case.kwargs)
    assert _column_stochastic(p)
    x = case.kwargs["x"]
    if len(x) > 1:
        changed = x.copy()
        changed[-1] = (changed[-1] + 1) % case.sizes["N_V"]
        q = case.algorithm(**{**case.kwargs, "x": changed})
        np.testing.assert_allclose(q[:, :-1], p[:, :-1], rtol=1e-12, atol=1e-12)


@slow
@given(etransformer_cases())
def test_etransformer_is_column_stochastic(case):
    assert _column_stochastic(case.algorithm(**case.kwargs))


@slow
@given(edtransformer_cases())
def test_edtransformer_is_column_stochastic(case):
    assert _column_stochastic(case.algorithm(**case.kwargs))


@slow
@given(dtransformer_cases(), st.integers(1, 3), st.integers(0, 2**32 - 1), st.sampled_from(["sample", "greedy"]))
def test_kv_cache_decoding_gives_the_same_tokens(case, ell_gen, seed, decoding):
    """KV-cache decoding produces exactly the tokens of decoding without the cache, with the same seed."""
    s, kwargs = case.sizes, dict(case.kwargs)
    options = {k: v for k, v in case.algorithm.options.items()}
    if "ell_max" in s:
        ell_max = s["ell"] + ell_gen
        if "W_p" in kwargs:
            kwargs["W_p"] = np.random.default_rng(seed).normal(size=(s["d_e"], ell_max))
        else:
            kwargs["ell_max"] = ell_max
    extra = {"seed": seed} if decoding == "sample" else {}
    plain = algorithms.dinference.variant(decoding=decoding, **options)
    cached = algorithms.dinference.variant(decoding=decoding, kv_cache=True, **options)
    truncation = {} if "ell_max" in s else {"ell_max": s["ell"] + ell_gen}
    without = plain(ell_gen=ell_gen, **kwargs, **truncation, **extra)
    with_cache = cached(ell_gen=ell_gen, **kwargs, **extra)
    np.testing.assert_array_equal(without, with_cache)


def test_cache_saves_a_derived_formula():
    """The cost of a generation with and without the cache differ by a polynomial of higher order in ℓ_gen."""
    from formal.core.symbols import ell_gen
    plain = algorithms.dinference.cost().flops
    cached = algorithms.dinference.variant(kv_cache=True).cost().flops
    assert sp.degree(plain, ell_gen) == 3 and sp.degree(cached, ell_gen) == 2


@slow
@pytest.mark.parametrize("convention", ["matmul", "full"])
@given(edinference_cases())
def test_edinference_cost_of_the_steps_taken_equals_counted_flops(convention, case):
    """Algorithm 15's cost is derived for ℓ_gen steps, the longest run.  Evaluated at the number of steps a
    run took (eos may come first), it equals the tally of what numpy performed — encoder rerun each step."""
    run, tally = tallied_run(case.algorithm, case.kwargs)
    steps = int(run.binding[n_steps])
    assert 1 <= steps <= case.sizes["ell_gen"]
    counted = tally.matmul if convention == "matmul" else tally.full
    assert evaluate(case.algorithm.cost(convention).flops, {**case.sizes, "ell_gen": steps}) == counted


def _model_options(algorithm):
    return {k: v for k, v in algorithm.options.items() if k not in ("tau", "decoding")}


@slow
@given(edinference_cases())
def test_edinference_equals_a_hand_written_greedy_loop(case):
    """Algorithm 15 written out here with Algorithm 8 as the model: from [bos], append the argmax of the
    last column until eos is drawn or ℓ_gen tokens are; the result drops bos and a final eos."""
    greedy = case.algorithm.variant(decoding="greedy")
    kwargs = {k: v for k, v in case.kwargs.items() if k != "seed"}
    run = greedy.run(**kwargs)

    model = algorithms.edtransformer.variant(**_model_options(case.algorithm))
    n_vocab, cap = case.sizes["N_V"], case.sizes["ell_gen"]
    bos, eos = n_vocab - 2, n_vocab - 1
    inputs = {k: v for k, v in kwargs.items() if k != "ell_gen"}
    x_hat = [bos]
    while len(x_hat) <= cap:
        x_hat.append(int(np.argmax(model(x=np.array(x_hat), **inputs)[:, -1])))
        if x_hat[-1] == eos:
            break
    expected = x_hat[1:-1] if x_hat[-1] == eos else x_hat[1:]

    assert run.output.tolist() == expected
    assert int(run.binding[n_steps]) == len(x_hat) - 1
    assert eos not in run.output.tolist() and len(run.output) <= cap


def _random_params(algorithm, sizes, seed=0):
    """Random parameters of the shapes ``algorithm`` states, for tests that do not check the shapes."""
    b = Binding({by_name(k): v for k, v in sizes.items()})
    rng = np.random.default_rng(seed)
    return {p.name: rng.normal(size=tuple(b.evaluate(d) for d in p.shape)) for p in algorithm.params}


@pytest.mark.parametrize("eos_sign, expected", [(1, []), (-1, [0, 0, 0, 0])])
def test_edinference_stops_at_eos_or_at_the_length_cap(eos_sign, expected):
    """Post-LN (Algorithm 8 as written): with the last layer norm's γ = 0 the decoder's last state is its β
    whatever the input, so the logits are W_u β.  W_u = β in eos's row only makes eos the argmax (stop after
    one step, nothing returned); −β there makes token 0 the first maximum every step (run to the cap, 4)."""
    a = algorithms.edinference.variant(decoding="greedy", tied=False, position="sinusoidal-vaswani")
    sizes = {"N_V": 5, "d_e": 4, "L_enc": 1, "L_dec": 1, "H": 2, "d_attn": 2, "d_mid": 2, "d_mlp": 3}
    params = _random_params(a, sizes)
    params["gamma5"] = np.zeros((1, 4))
    params["W_u"] = np.zeros((5, 4))
    params["W_u"][4] = eos_sign * params["beta5"][0]
    run = a.run(z=np.array([0, 1, 2]), ell_gen=4, ell_max=4, **params)
    assert run.output.tolist() == expected
    assert int(run.binding[n_steps]) == (1 if eos_sign > 0 else 4)


def test_edinference_length_cap_must_fit_the_position_table():
    a = algorithms.edinference.variant(decoding="greedy")
    sizes = {"N_V": 5, "d_e": 2, "L_enc": 1, "L_dec": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1, "ell_max": 3}
    with pytest.raises(formal.ConfigError, match="ell_gen = 4 exceeds ell_max = 3"):
        a.run(z=np.array([0, 1]), ell_gen=4, **_random_params(a, sizes))


def test_edinference_sampling_is_reproducible_with_a_seed():
    a = algorithms.edinference.variant(tau=2.0)
    sizes = {"N_V": 6, "d_e": 2, "L_enc": 1, "L_dec": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1, "ell_max": 8}
    params, z = _random_params(a, sizes), np.array([0, 1])
    runs = [a(z=z, ell_gen=8, seed=seed, **params).tolist() for seed in (7, 7, 8, 9, 10)]
    assert runs[0] == runs[1]
    assert len({tuple(r) for r in runs}) > 1


def test_context_is_truncated_to_ell_max():
    """DInference keeps at most the last ℓ_max tokens (decision-inference-context): it runs past ℓ_max."""
    a = algorithms.dinference.variant(decoding="greedy", position="sinusoidal-vaswani")
    params = _random_params(a, {"N_V": 5, "d_e": 2, "L": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1})
    out = a(x=np.array([1, 2, 3]), ell_gen=4, ell_max=3, **params)
    assert out.shape == (4,)


@pytest.mark.parametrize("build, message", [
    (lambda: algorithms.dinference.variant(tau=0),
     "tau = 0 must be a finite number > 0; for tau → 0 use decoding='greedy'"),
    (lambda: algorithms.dinference.variant(tau=-1.0), "must be a finite number > 0"),
    (lambda: algorithms.dtransformer.variant(activation="tanh"),
     "activation = 'tanh' must be 'relu', 'gelu', 'gelu-tanh' or 'swiglu'"),
    (lambda: algorithms.dtransformer.variant(position="rope"),
     "position = 'rope' must be 'learned', 'sinusoidal-paper', 'sinusoidal-vaswani' or 'none'"),
    (lambda: presets.resolve_sizes(algorithms.dtransformer, {"d_e": 10, "H": 3}), "d_e = 10 is not divisible by H = 3"),
])
def test_bad_configuration_is_a_config_error(build, message):
    with pytest.raises(formal.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()


def test_sequence_longer_than_ell_max_is_a_config_error():
    case_sizes = {"N_V": 5, "ell_max": 2, "d_e": 2, "L": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1}
    with pytest.raises(formal.ConfigError, match="ell = 3 exceeds ell_max = 2"):
        presets.resolve_sizes(algorithms.dtransformer, case_sizes, 3)


def test_training_computes_the_loss_and_asks_the_reference_for_the_gradient():
    """Algorithm 13 in numpy: its loss line runs, its gradient step says where gradients come from."""
    s = {"N_V": 5, "ell_max": 3, "d_e": 2, "L": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1}
    params = _random_params(algorithms.dtraining, s)
    assert np.isfinite(algorithms.dloss(x=np.array([1, 2, 3]), **params))
    with pytest.raises(formal.ConfigError, match="computes losses, not gradients"):
        algorithms.dtraining.run(data=np.array([[1, 2, 3]]), N_epochs=1, **params)


@pytest.mark.parametrize("argv, message", [
    (["complexity", "nope"], "unknown preset 'nope'"),
    (["complexity"], "give a preset name or --config"),
    (["complexity", "gpt2", "--seq-len", "0"], "argument --seq-len: 0 must be an integer from 1 to"),
    (["complexity", "gpt2", "--seq-len", "2000"], "exceeds ell_max = 1024"),
])
def test_complexity_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("text, message", [
    ("x = [", "is not valid TOML"),
    ('algorithm = "dtransformer"\nimport = "os"', "unknown key 'import'"),
    ('algorithm = "attention"', "complexity needs a model"),
    ('algorithm = "dtransformer"\n[sizes]\nd_e = "__import__(\'os\')"', "is not part of a formula"),
    ('algorithm = "dtransformer"\n[sizes]\nd_e = "0 - 768"', "is -768, which is not a positive integer"),
    ('algorithm = "dtransformer"\n[sizes]\nd_e = 768.5', "is 1537/2, which is not a positive integer"),
])
def test_malformed_config_is_one_line_and_exit_2(tmp_path, text, message, capsys):
    path = tmp_path / "model.toml"
    path.write_text(text)
    assert main(["complexity", "--config", str(path), "--seq-len", "4"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_complexity_json_has_integer_totals(capsys):
    import json
    assert main(["complexity", "gpt2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"]["total"] == presets.get("gpt2").evaluate()["params"]
    assert isinstance(data["flops"]["forward"], int) and data["flops"]["forward"] > 0


def test_config_file_equals_preset(tmp_path, capsys):
    """A config file with a preset's options and sizes reports the preset's numbers."""
    import json
    p = presets.get("gpt2")
    lines = ['algorithm = "dtransformer"', "seq_len = 1024", "[options]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in p.options.items()]
    lines += ["[sizes]"] + [f"{k} = {v}" for k, v in p.sizes.items()]
    path = tmp_path / "gpt2.toml"
    path.write_text("\n".join(lines))
    main(["complexity", "--config", str(path), "--json"])
    from_file = json.loads(capsys.readouterr().out)
    main(["complexity", "gpt2", "--json"])
    from_preset = json.loads(capsys.readouterr().out)
    assert from_file["params"] == from_preset["params"] and from_file["flops"] == from_preset["flops"]
