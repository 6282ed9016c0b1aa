"""What a command imports: ``import formal`` and ``complexity`` of a preset (the shipped formulas,
:mod:`formal.models.costcache`) load none of sympy, numpy, networkx or torch, and no deferred command
(``reference``); ``--symbolic`` and a configuration the cache does not hold derive with sympy.  Checked in a
fresh interpreter through ``sys.modules`` — a property, not a timing (the times are in
benchmarks/bench_complexity.py)."""

import json
import subprocess
import sys
import textwrap

from formal.models.presets import PRESETS
from tests.tiers import slow

HEAVY = ("sympy", "numpy", "networkx", "torch", "matplotlib", "reference")


def _imported(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; what it printed last (JSON), and the heavy modules it imported."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_formal_imports_no_heavy_module():
    assert _imported("""
        import formal
        assert formal.__version__ and formal.FormalError and "attention" in dir(formal)
        assert set(formal.__all__) <= set(dir(formal))
    """) == []


def test_the_names_of_formal_are_there_on_first_use():
    """(Importing what they need: that is theirs to decide.)"""
    _imported("""
        import formal
        assert formal.attention.name == "attention" and formal.core.symbols.d_e.name == "d_e"
        assert formal.get("mhattention", n_kv_heads=2).options["n_kv_heads"] == 2
        assert "matmul" in formal.CONVENTIONS and formal.Cost and formal.core.masks.causal
    """)


def test_complexity_of_every_preset_imports_no_heavy_module(tmp_path):
    """Every preset, text and --json, under several flags; and a configuration file with a preset's options."""
    config = tmp_path / "mine.toml"
    p = PRESETS["llama-2-7b"]
    config.write_text('algorithm = "dtransformer"\nseq_len = 512\n[options]\n'
                      + "".join(f"{k} = {json.dumps(v)}\n" for k, v in p.options.items())
                      + "[sizes]\n" + "".join(f"{k} = {v}\n" for k, v in p.sizes.items()))
    runs = [["complexity", name, *flags] for name in PRESETS
            for flags in ([], ["--json"], ["--seq-len", "100", "--convention", "full", "--dtype", "bf16"])]
    runs += [["complexity", "--config", str(config)], ["complexity", "--list"],
             ["complexity", "gpt2", "--seq-len", "0"], ["complexity", "nope"]]
    assert _imported(f"""
        import contextlib, io
        from formal.tools.cli import main
        for argv in {runs!r}:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(argv)
    """) == []


def test_the_numeric_report_api_imports_no_heavy_module():
    assert _imported("""
        from formal.models.complexity import preset_report
        assert preset_report("gpt2")["params"]["total"] == 124439808
    """) == []


@slow
def test_symbolic_and_uncached_options_derive_with_sympy(tmp_path):
    """The check above can fail: these two paths do import sympy."""
    config = tmp_path / "gqa.toml"
    config.write_text('algorithm = "dtransformer"\nseq_len = 8\n[options]\nn_kv_heads = 2\n[sizes]\n'
                      'N_V = 100\nell_max = 8\nd_e = 16\nL = 1\nH = 4\nd_mlp = 32\n')
    for argv in (["complexity", "gpt2", "--symbolic"], ["complexity", "--config", str(config)]):
        assert "sympy" in _imported(f"""
            import contextlib, io
            from formal.tools.cli import main
            with contextlib.redirect_stdout(io.StringIO()):
                assert main({argv!r}) == 0
        """)


def test_the_deferred_commands_are_registered_when_named_or_for_the_help():
    from formal.tools.cli import DEFERRED
    names = sorted(DEFERRED)
    done = subprocess.run([sys.executable, "-m", "formal", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and all(f"    {n} " in done.stdout for n in names), done.stdout
    done = subprocess.run([sys.executable, "-m", "formal", "nosuch"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and all(repr(n) in done.stderr for n in names), done.stderr
    done = subprocess.run([sys.executable, "-m", "formal", names[0], "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith(f"usage: formal-transformers {names[0]}")
