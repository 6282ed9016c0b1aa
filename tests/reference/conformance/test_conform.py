"""`formal-transformers conform`: correct implementations pass, every planted bug fails with the property it
breaks, and bad input gives one line and exit 2 (the command line at fault) or 1 (the implementation).

The correct implementations and the planted bugs are the shipped catalogue's (:mod:`reference.catalogue`);
the command line loads them by name from ``targets/catalogue.py``, as it loads a user's file."""

import json
from pathlib import Path

import numpy as np
import pytest

from formal import algorithms
from formal.errors import ConfigError
from formal.sampling.examples import examples
from formal.tools.cli import main
from reference.catalogue import FACTORIES, MUTANTS
from reference.conformance.conform import Checker, conform as conform_api, normalise
from reference.conformance.targets import Failed, Target
from tests.reference.conformance.targets import catalogue
from tests.tiers import fast_few, slow

#: The files conform loads by path, as it loads a user's.
TARGETS = Path(__file__).parent / "targets"


def conform(capsys, target, *args):
    status = main(["conform", f"{TARGETS}/{target}", *args])
    out, err = capsys.readouterr()
    return status, out, err


def conform_entry(capsys, name, *args):
    """``conform`` on the catalogue's entry ``name``, against the variant it is checked under."""
    entry = catalogue.entry(name)
    options = [arg for key, value in entry.options.items() for arg in ("-o", f"{key}={value}")]
    return conform(capsys, f"catalogue.py:{name}", "--algorithm", entry.algorithm, *options, *args)


@pytest.mark.parametrize("name", fast_few([
    "attention_correct",
    "mhattention_correct",
    "layer_norm_correct",
    "unembedding_correct",
    "dtransformer_correct",
    "edtransformer_correct",
    "lstm_cell_correct",
    "rnn_layer_correct",
]))
def test_correct_implementations_conform(capsys, name):
    """A correct implementation of the default variant passes every property (exit 0)."""
    status, out, _ = conform_entry(capsys, name, "--examples", "12")
    assert status == 0, out
    assert "PASS" in out.splitlines()[-1]


#: The bugs public implementations of the paper have had (the catalogue's entries from the README): the
#: comparison with the spec catches each.
PUBLIC = [(m.name, "spec") for m in MUTANTS if m.source == "README"]

#: More departures from the spec, from the catalogue, with the property each breaks first.
REVIEWED = [
    ("mhattention_heads_interleaved", "spec"),
    ("attention_scores_transposed", "spec"),
    ("attention_nan_for_empty_rows", "finite"),
    ("attention_ignores_mask", "spec"),
    ("layer_norm_unbiased_variance", "spec"),
    # W_p[:, t + 1] reads past the table where ℓ = ℓ_max, as in the smallest failing configuration
    ("dtransformer_positions_off_by_one", "runs"),
    ("unembedding_without_softmax", "spec"),
    # recurrent cells and layers
    ("lstm_cell_gates_in_notes_order", "spec"),
    ("lstm_cell_without_forget_gate", "spec"),
    ("rnn_layer_without_forget_gate", "spec"),
    ("rnn_layer_gates_in_notes_order", "spec"),
]

#: Calls that go wrong in what conform checks before the spec's properties (targets/mechanics.py).
BROKEN_CALLS = [
    ("attention_wrong_shape", "shape"),
    ("attention_returns_text", "type"),
    ("attention_raises", "runs"),
    ("attention_wrong_signature", "signature"),
]


def _caught(status, out, err, prop):
    """Exit 1, the failing property named, the smallest failing configuration and the seed reported, one line
    of verdict — no traceback."""
    assert status == 1, out
    verdict = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert verdict and verdict[0].startswith(f"FAIL {prop}:"), out
    assert "smallest failing configuration" in out and "seed" in out
    assert "Traceback" not in out + err


@pytest.mark.parametrize("name, prop", fast_few(PUBLIC + REVIEWED, unpack=True))
def test_every_planted_bug_is_caught(capsys, name, prop):
    """Each planted bug of the catalogue, under its variant: exit 1, the property it breaks named, the smallest
    failing configuration and the seed reported, one line of verdict — no traceback."""
    _caught(*conform_entry(capsys, name), prop)


@slow
@pytest.mark.parametrize("function, prop", fast_few(BROKEN_CALLS, unpack=True))
def test_every_broken_call_is_caught(capsys, function, prop):
    """A wrong shape, text returned, a raise, a wrong signature: each fails conform's own check the same way."""
    _caught(*conform(capsys, f"mechanics.py:{function}", "--algorithm", "attention"), prop)


def test_json_report(capsys):
    status, out, _ = conform(capsys, "catalogue.py:attention_divides_by_d", "--algorithm", "attention", "--json",
                             "--examples", "5", "--seed", "3")
    report = json.loads(out)
    assert status == 1 and report["verdict"] == "fail" and report["failure"]["property"] == "spec"
    assert report["seed"] == 3 and {c["property"] for c in report["checks"]} >= {"spec", "shape", "masks"}


@slow
def test_variant_options_are_checked(capsys):
    """``-o`` picks the variant: an implementation that requires the biases fails the bias-free variant's
    signature, since no b_q is passed to it."""
    status, out, _ = conform(capsys, "mechanics.py:attention", "--algorithm", "attention", "-o", "bias=false")
    assert status == 1 and "FAIL signature" in out


# --------------------------------------------------------------------- the algorithm's own properties
def _checker(function, name, **options):
    algorithm = algorithms.get(name, **options)
    return Checker(Target(function, function.__name__, algorithm), 1e-10, seed=0), algorithm


def test_masks_property_catches_a_function_that_reads_hidden_keys():
    """Algorithm 4, line 5: hidden keys have no influence — a function ignoring the mask (the catalogue's)
    fails ``masks``."""
    bug = catalogue.entry("attention_ignores_mask")
    checker, algorithm = _checker(bug.function, bug.algorithm, **bug.options)
    for ex in examples("attention", 30, seed=0, **algorithm.options):
        args = normalise(ex)
        if args.get("Z") is not None and (args["mask"] == 0).any():
            with pytest.raises(Failed) as failed:
                checker.masks(args, checker.target(args))
            assert failed.value.property == "masks"
            return
    pytest.fail("no example with a hidden key")


def test_causality_property_catches_a_bidirectional_decoder():
    """Algorithm 10: column t of P depends on tokens ≤ t only — a decoder without its mask (the catalogue's)
    fails."""
    checker, _ = _checker(catalogue.entry("dtransformer_without_mask").function, "dtransformer")
    ex = next(e for e in examples("dtransformer", 10, seed=0, **algorithms.dtransformer.options)
              if len(e.arguments["x"]) >= 3)
    args = normalise(ex)
    with pytest.raises(Failed, match="only tokens after"):
        for _ in range(10):  # the position t is drawn; some t may see no change by chance
            checker.causality(args, checker.target(args))


def test_equivariance_property_catches_a_position_dependent_attention():
    """Attention without a mask commutes with permutations of the tokens — adding a position signal breaks it."""
    correct = FACTORIES["attention"]()

    def positional(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
        return correct(X + np.arange(X.shape[1]), mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)
    checker, _ = _checker(positional, "attention")
    plain = dict(bias=True, empty="zero", score="scaled_dot", score_bias=False, score_cap=None, qk_norm=None,
                 rope=None)                                               # the variant FACTORIES["attention"]() is
    ex = next(e for e in examples("attention", 10, seed=0, **plain) if e.arguments["X"].shape[1] >= 2)
    with pytest.raises(Failed) as failed:
        checker.equivariance(normalise(ex))
    assert failed.value.property == "equivariance"


# ------------------------------------------------------------------------------------------ bad input
CORRECT = "catalogue.py:attention_correct"


@pytest.mark.parametrize("target, args, status, message", fast_few([
    ("nowhere.py:attention", [], 2, "does not exist"),
    ("catalogue.py", [], 2, "must be path/to/file.py:function"),
    ("catalogue.py:missing", [], 2, "has no function 'missing'"),
    (CORRECT, ["--algorithm", "nope"], 2, "conform checks"),
    (CORRECT, ["--examples", "0"], 2, "argument --examples: 0 must be an integer from 1 to 100000"),
    (CORRECT, ["--seed", "-1"], 2, "argument --seed: -1 must be"),
    (CORRECT, ["--max-size", "1"], 2, "argument --max-size: 1 must be"),
    (CORRECT, ["--timeout", "0"], 2, "argument --timeout: '0' must be a number of seconds > 0"),
    (CORRECT, ["--timeout", "nan"], 2, "argument --timeout: 'nan' must be"),
    (CORRECT, ["--profile", "slow"], 2, "invalid choice"),
    (CORRECT, ["-o", "colour=red"], 2, "no option 'colour'"),
    ("mechanics.py:NOT_A_FUNCTION", [], 1, "not a function"),
    ("broken.py:attention", [], 1, "importing"),
], keep=2, unpack=True))
def test_bad_targets_and_usage(capsys, tmp_path, target, args, status, message):
    if target.startswith("broken.py"):
        broken = tmp_path / "broken.py"
        broken.write_text("import numpy as np\nraise RuntimeError('half-written module')\n")
        code = main(["conform", f"{broken}:attention", "--algorithm", "attention"])
    else:
        code = main(["conform", f"{TARGETS}/{target}", *(args if "--algorithm" in args else ["--algorithm", "attention",
                                                                                          *args])])
    out, err = capsys.readouterr()
    assert code == status
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "Traceback" not in err


@slow
def test_module_targets(capsys):
    """``module:function`` imports a module from sys.path (the tests' package, from the repository root); an
    unknown module is a usage error."""
    assert main(["conform", "tests.reference.conformance.targets.catalogue:layer_norm_correct", "--algorithm",
                 "layer_norm", "--examples", "3"]) == 0
    assert main(["conform", "no_such_module_here:f", "--algorithm", "layer_norm"]) == 2
    assert "no module named" in capsys.readouterr().err


# ------------------------------------------------------------------------- the README's examples, as written
ROOT = Path(__file__).resolve().parents[3]


@slow
def test_readme_conform_examples_pass_as_written(capsys, monkeypatch):
    """The README's `conform` commands name files that exist (examples/) and pass: a new user can copy one.
    Among them Algorithm 4 with the paper's signature, Z required (self-attention examples pass Z = X), and
    one of torch."""
    pytest.importorskip("torch")
    import re
    import shlex
    monkeypatch.chdir(ROOT)
    commands = re.findall(r"^\$ formal-transformers (conform examples/.+?)$", (ROOT / "README.md").read_text(), re.M)
    assert len(commands) >= 3
    for command in commands:
        status = main(shlex.split(command.split("#")[0]))
        out = capsys.readouterr().out
        assert status == 0, (command, out)
        assert out.splitlines()[-1].startswith("PASS")


def test_required_z_gets_x_and_a_defaulted_z_is_left_out():
    """Self-attention examples leave Z to its default: a function that requires Z gets Z = X, one that gives
    Z a default of its own is called without it (so its default is what is checked)."""
    correct = FACTORIES["attention"]()
    seen = []

    def required(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
        seen.append(("required", Z is X or np.array_equal(Z, X)))
        return correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)

    def defaulted(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z="unset"):
        seen.append(("defaulted", isinstance(Z, str)))
        return correct(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, None if isinstance(Z, str) else Z)

    for function in (required, defaulted):
        assert conform_api(function, "attention", n_examples=6).ok
    assert ("required", True) in seen and ("defaulted", True) in seen


def test_spec_undefined_examples_are_skipped_not_usage_errors(monkeypatch):
    """Where the spec raises on an example (a configuration it does not define), conform skips the example
    and says so; only when it is undefined on every example is that a usage error naming the reason."""
    import reference.conformance.conform as module
    from formal.errors import DomainError
    real = module._outputs
    calls = {"n": 0}

    def sometimes(result):
        calls["n"] += 1
        if calls["n"] % 2:
            raise DomainError("v = 0 under eps = 0")
        return real(result)
    monkeypatch.setattr(module, "_outputs", sometimes)
    report = conform_api(FACTORIES["layer_norm"](), "layer_norm", n_examples=6)
    assert report.ok and report.undefined and "v = 0 under eps = 0" in report.undefined[0]
    monkeypatch.setattr(module, "_outputs", lambda result: (_ for _ in ()).throw(DomainError("v = 0")))
    with pytest.raises(ConfigError, match="the spec is undefined on every example"):
        conform_api(FACTORIES["layer_norm"](), "layer_norm", n_examples=2)


def test_the_algorithm_object_is_used_as_given():
    """conform takes an algorithm object and checks that variant: no name looked up again."""
    rms = algorithms.layer_norm.variant(norm="rms")
    report = conform_api(FACTORIES["layer_norm"](), rms, n_examples=3)
    assert not report.ok and report.failure["property"] in ("signature", "spec")
    assert report.algorithm == rms.label and report.options["norm"] == "rms"


# ------------------------------------------------------------------------------------ verify --mutants
@slow
def test_verify_mutants_reports_the_kill_rate(capsys, tmp_path):
    """`verify --mutants` runs conform on the catalogue's controls and mutants: a table per algorithm, the
    kill rate, exit 0 when every control passes and every mutant fails; the JSON report agrees."""
    path = tmp_path / "mutants.json"
    status = main(["verify", "--mutants", "--only", "attention,layer_norm", "--json", str(path)])
    out = capsys.readouterr().out
    data = json.loads(path.read_text())
    assert status == 0, out
    assert data["verdict"] == "pass" and data["kill_rate"] == 1.0
    assert {r["algorithm"] for r in data["rows"]} == {"attention", "layer_norm"}
    assert all(o["verdict"] == ("pass" if o["kind"] == "control" else "fail") for o in data["outcomes"])
    assert out.splitlines()[-1].startswith("kill rate 100.0%")


@slow
def test_verify_mutants_fails_when_the_generator_is_weak(capsys, monkeypatch):
    """With the old generator's faults put back (no boundary cases, sizes capped at 6), the chunked-attention
    mutant survives: the kill rate drops, the survivor is named, exit 1."""
    import formal.sampling.examples as examples_module
    monkeypatch.setattr(examples_module, "boundary_cases", lambda algorithm, max_size: [])
    monkeypatch.setitem(examples_module.PROFILES, "quick", examples_module.Profile(20, 6))
    status = main(["verify", "--mutants", "--only", "attention", "--jobs", "1"])  # planted here: this process
    out = capsys.readouterr().out
    assert status == 1
    assert "SURVIVED attention_chunked_forgets_earlier_keys" in out


@pytest.mark.parametrize("args, message", [
    (["--mutants", "--only", "nope"], "verify knows no algorithm 'nope'"),
    (["--mutants", "--seed", "-1"], "argument --seed: -1 must be a non-negative integer"),
    (["--seed", "-1"], "argument --seed: -1 must be a non-negative integer"),
    (["--mutants", "--json", "/nonexistent-folder/m.json"], "does not exist"),
])
def test_verify_mutants_bad_usage(capsys, args, message):
    assert main(["verify", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_causality_property_catches_a_forward_recurrence_that_reads_backwards():
    """A forward recurrent layer's state at t reads X[:, ≤ t]; one that runs from the end fails
    ``causality`` (and its spec comparison): the catalogue's layer whose one pass reads the sequence last
    position first."""
    checker, _ = _checker(catalogue.entry("rnn_layer_forward_reads_backwards").function, "rnn_layer")
    ex = next(e for e in examples("rnn_layer", 10, seed=0, **algorithms.rnn_layer.options) if e.sizes["ell"] >= 3)
    args = normalise(ex)
    with pytest.raises(Failed, match="only inputs after"):
        checker.causality(args, checker.target(args))


@slow
def test_conform_checks_a_torch_lstm_through_its_reader(capsys, tmp_path):
    """A user's torch.nn.LSTM wrapped as a function of the spec's parameters conforms to the spec's stack
    with torch's conventions (two biases per gate)."""
    pytest.importorskip("torch")
    target = tmp_path / "torch_lstm.py"
    target.write_text(
        "import numpy as np, torch\n"
        "def lstm(X, params):\n"
        "    d_x, d_h = params['W_xi_1'].shape[1], params['W_hi_1'].shape[0]\n"
        "    L = 1 + params['W_xi_l'].shape[0]\n"
        "    m = torch.nn.LSTM(d_x, d_h, num_layers=L, batch_first=True).double()\n"
        "    sd = {}\n"
        "    for l in range(L):\n"
        "        get = (lambda n: params[n + '_1']) if l == 0 else (lambda n, l=l: params[n + '_l'][l - 1])\n"
        "        for side, w in (('ih', 'x'), ('hh', 'h')):\n"
        "            sd[f'weight_{side}_l{l}'] = torch.tensor(np.concatenate([get(f'W_{w}{g}') for g in 'ifgo']))\n"
        "            sd[f'bias_{side}_l{l}'] = torch.tensor(np.concatenate([get(f'b_{w}{g}') for g in 'ifgo']))\n"
        "    m.load_state_dict(sd)\n"
        "    with torch.no_grad():\n"
        "        return m(torch.tensor(X.T[None]))[0][0].numpy().T\n")
    status = main(["conform", f"{target}:lstm", "--algorithm", "rnn", "-o", "cell=lstm", "-o", "bias=double",
                   "--examples", "8"])
    out, _ = capsys.readouterr()
    assert status == 0, out


def _torch_show_attend_tell(flatten):
    """A user's Show-Attend-Tell in the rows layout (P and α one row per step), taking the feature grid F
    (n_h, n_w, D) and flattening it with ``flatten`` before torch's model runs."""
    import torch

    from formal.algorithms.captioning import show_attend_tell as spec
    from reference.model import captioning

    def show_attend_tell(F, x, params):
        p = {k: torch.tensor(v) for k, v in params.items()}
        A = flatten(torch.tensor(F))[None]
        P, alpha = captioning.show_attend_tell(A, torch.tensor(x)[None], p, dict(spec.options))
        return P[0].numpy(), alpha[0].numpy()
    return show_attend_tell


@slow
def test_a_grid_input_is_channel_last_in_the_rows_layout_too():
    """An image's grid F is n_h×n_w×D in either layout (the rows layout transposes feature columns, not a
    grid): a rows-layout Show-Attend-Tell that reshapes F row-major conforms; one that reads it as channel
    first (torch's NCHW ``view(D, −1)`` on a channel-last grid) fails the spec comparison."""
    pytest.importorskip("torch")
    good = conform_api(_torch_show_attend_tell(lambda F: F.reshape(-1, F.shape[-1])), "show_attend_tell",
                   options={"inputs": "grid"}, layout="rows", n_examples=8)
    assert good.ok, good.failure
    bad = conform_api(_torch_show_attend_tell(lambda F: F.reshape(F.shape[-1], -1).T), "show_attend_tell",
                  options={"inputs": "grid"}, layout="rows", n_examples=8)
    assert not bad.ok and bad.failure["property"] == "spec", bad.failure
