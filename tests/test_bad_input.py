"""A catalogue of hostile inputs run through the real command line (``python -m formal``, a subprocess).

The promise under test (README, ``formal/tools/cli.py``): bad input prints one line on stderr, starting
``formal-transformers: error:``, and exits with status 2 (1 where the implementation checked by
``conform`` is at fault); never a traceback; bounded time and memory; ``--json`` prints one valid JSON object
or nothing; nothing is written outside the path the user asked for; nothing in a file or option is executed
as code.

Each :class:`Case` runs in a fresh working directory (its own temporary folder) with ``HOME`` pointing at
another empty temporary folder, under ``RLIMIT_AS`` = 6 GiB (torch imports and runs under it: checked by
:func:`test_the_limits_leave_room_for_torch`) and a hang limit: a run still going after :data:`HANG_LIMIT`
seconds (a case's own ``hang_limit`` where it sets one) is killed and fails as hung.  The hang limits detect
hangs (a FIFO that is never written, ``/dev/zero`` read to the end, a 10¹²-edge graph built), not speed: each
is over ten times the longest the cases under it were measured to take, and no case asserts how fast it runs.
Every case checks:

- that it answers within its hang limit;
- the exit status;
- stderr: for an exit status 2 (and a 1 where ``stderr="line"``) exactly one non-empty line starting with
  ``formal-transformers: error:``, at most :data:`MAX_LINE` characters; for exit status 0, nothing; for a
  ``conform`` exit status 1 where a property failed (``stderr="report"``) the report is on stdout and stderr
  holds no traceback;
- no ``Traceback`` on stdout or stderr;
- with ``--json`` on the command line (``list``/``show``/``complexity``/``graph``/``conform``): stdout empty
  or exactly one JSON object;
- the files under the working directory and HOME afterwards are those before, plus at most the paths the case
  names in ``files`` (nothing else is created, changed into something else, or removed).

The cases run in a small thread pool (2 workers) in one module-scoped fixture, only those selected: the fast
tier (``-m "not slow"``) runs the first case of each command, the full suite all of them.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from tests.tiers import fast_few

AS_LIMIT = 6 * 2**30      # RLIMIT_AS of every run (torch imports and runs under it)
# The hang limit, in seconds: a run still going after it is killed and its case fails as hung.  It detects hangs,
# not speed, so it is generous enough that a loaded machine never trips it: measured on 2 shared cores, every case
# but one (the 50 MB edge list, which sets its own) answers in under 6 s on a quiet machine and under 10 s with
# both cores busy elsewhere.
HANG_LIMIT = 120
MAX_LINE = 1000           # characters of the one error line (a 100 KB value must not be echoed whole)
WORKERS = 2
PREFIX = "formal-transformers: error:"
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Case:
    """One hostile command line.

    ``argv``: the arguments after ``python -m formal`` (str, or bytes for a name that is not UTF-8);
    ``status``: the exit status expected; ``files``: the paths (relative to the working directory) the run
    may create; ``setup``: a function of the working directory that creates the hostile files;
    ``stderr``: ``"line"`` (one error line), ``"report"`` (conform's and check's exit 1: the report is on stdout)
    or ``"line+report"`` (check's invalid claim: one error line, and the other claims' report on stdout);
    ``contains``: text the error line (or, for status 0, stdout) must contain; ``hang_limit``: the seconds after
    which the run is killed as hung, where the case needs more than :data:`HANG_LIMIT`; ``note``: why the case
    expects what it does, where that needs saying.
    """

    id: str
    argv: tuple
    status: int
    files: tuple = ()
    setup: Callable[[Path], None] | None = None
    stderr: str = "line"
    contains: tuple = ()
    hang_limit: float | None = None
    note: str = ""

    @property
    def torch(self) -> bool:
        return bool(self.argv) and self.argv[0] in ("verify", "conform")

    @property
    def limit(self) -> float:
        """The seconds after which the run is killed as hung."""
        return HANG_LIMIT if self.hang_limit is None else self.hang_limit


# ------------------------------------------------------------------------------------------ hostile files
CLAIM = """\
[[claim]]
id = "gpt2"
model = "gpt2"
quantity = "params.total"
approx = "124M"
"""

GOOD_CONFIG = """\
name = "tiny"
algorithm = "dtransformer"
seq_len = 64
[options]
tied = true
[sizes]
N_V = 100
ell_max = 128
d_e = 64
L = 2
H = 4
d_mlp = 256
"""


def _write(name: str, content):
    """A setup writing ``content`` (text or bytes) to ``name`` in the working directory."""
    def setup(cwd: Path):
        target = cwd / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return setup

def _paged_claim(paged: str):
    """A claims file ``c.toml`` with one paged claim on GPT-2 whose ``paged`` field is the TOML text ``paged``."""
    return _write("c.toml", f'[[claim]]\nid = "c"\nmodel = "gpt2"\nseq_len = 100\npaged = {paged}\n'
                            'quantity = "kv_paged.blocks"\nequals = 7\n')



def _claim(fields: str):
    """A claims file ``c.toml`` with one claim (id "c") of the TOML ``fields``."""
    return _write("c.toml", '[[claim]]\nid = "c"\n' + fields)


def _config(**replace):
    """GOOD_CONFIG with lines replaced: ``replace`` maps a line's key (``d_e``) to its new line (``d_e = -1``);
    ``extra`` appends lines at the end; ``extra_top`` inserts lines before the first table."""
    lines = GOOD_CONFIG.splitlines()
    extra_top = replace.pop("extra_top", "")
    extra = replace.pop("extra", "")
    out = []
    for line in lines:
        key = line.split("=")[0].strip()
        if line.startswith("[options]") and extra_top:
            out.append(extra_top)
        out.append(replace.get(key, line) if "=" in line else line)
    text = "\n".join(l for l in out if l is not None) + "\n" + (extra + "\n" if extra else "")
    return text


def _binary(cwd: Path):
    (cwd / "bad.toml").write_bytes(bytes(range(256)) * 16 + b"\xff\xfe\x00\x80")


def _latin1(cwd: Path):
    (cwd / "bad.toml").write_bytes(GOOD_CONFIG.replace('"tiny"', '"caf\xe9"').encode("latin-1"))


def _fifo_named(name):
    def setup(cwd: Path):
        os.mkfifo(cwd / name)
    return setup


def _directory_named(name):
    def setup(cwd: Path):
        (cwd / name).mkdir()
    return setup


def _symlink_named(name, target="/dev/zero"):
    def setup(cwd: Path):
        os.symlink(target, cwd / name)
    return setup


def _big_named(name, size=50 * 2**20):
    """A 50 MB file (sparse: NUL bytes, instantly created)."""
    def setup(cwd: Path):
        with open(cwd / name, "wb") as handle:
            handle.truncate(size)
    return setup


def _big_text_named(name, size=50 * 2**20):
    """A 50 MB file of valid 'key query' lines (really written: not sparse)."""
    def setup(cwd: Path):
        line = b"0 1\n"
        with open(cwd / name, "wb") as handle:
            handle.write(line * (size // len(line)))
    return setup


def _both(*setups):
    def setup(cwd: Path):
        for s in setups:
            s(cwd)
    return setup


INJECT = "__import__('os').system('touch pwned')"
SHELL = "$(touch pwned); `touch pwned`; touch pwned"

DINFERENCE_TARGET = """\
import formal

_spec = formal.get("dinference", tau=1e-30)


def dinference(x, params, ell_gen, seed=None, ell_max=None):
    extra = {} if ell_max is None else {"ell_max": ell_max}
    return _spec(x=x, ell_gen=ell_gen, seed=seed, **extra, **params)
"""

HOARDING_TARGET = """
import numpy as np
def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    kept = [np.ones(10**7) for _ in range(1000)]   # 80 MB at a time, 80 GB in all
    return kept[0][:1]
"""
WRONG_TARGET = """\
import numpy as np


def attention(X, Z=None, mask=None, **params):
    return np.zeros((params["W_v"].shape[0], X.shape[1]))
"""

NOISY_TARGET = """\
import os
import sys

print("{ not json")
os.write(1, b"]] also not json\\n")
os.write(2, b"Traceback (most recent call last):\\n  printed by the target at import\\n")


def attention(X, Z=None, mask=None, **params):
    print("{")
    sys.stderr.write("Traceback (most recent call last):\\n")
    os.write(2, b"Traceback (most recent call last): fd 2\\n")
    os._exit(3)
"""

ATTENTION_TARGET = (REPO / "examples" / "attention.py").read_text(encoding="utf-8")
NAN_TARGET = """\
import numpy as np


def attention(X, Z=None, mask=None, **params):
    return np.full((params["W_v"].shape[0], X.shape[1]), np.nan)
"""

# ------------------------------------------------------------------------------------------ the catalogue
C = Case
CONFIG = ("complexity", "--config", "bad.toml")
SHOW_LN = ("show", "layer_norm", "-o")

CASES = [
    # ---------------------------------------------------------------- top level
    C("top-no-command", (), 2),
    C("top-unknown-command", ("frobnicate",), 2),
    C("top-version", ("--version",), 0, contains=("formal-transformers",)),
    C("top-list-json", ("list", "--json"), 0, contains=('"algorithms"',)),
    C("top-list-extra-argument", ("list", "extra"), 2),

    # ---------------------------------------------------------------- complexity --config: hostile files
    C("config-binary", CONFIG, 2, setup=_binary),
    C("config-not-utf8", CONFIG, 2, setup=_latin1),
    C("config-5000-nested-arrays", CONFIG, 2, setup=_write("bad.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n")),
    C("config-5000-nested-inline-tables", CONFIG, 2,
      setup=_write("bad.toml", "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")),
    C("config-5000-dotted-key", CONFIG, 2, setup=_write("bad.toml", "a" + ".a" * 5000 + " = 1\n")),
    C("config-5000-table-headers", CONFIG, 2, setup=_write("bad.toml", "[" + ".".join(["t"] * 5000) + "]\n")),
    C("config-fifo", CONFIG, 2, setup=_fifo_named("bad.toml")),
    C("config-directory", CONFIG, 2, setup=_directory_named("bad.toml")),
    C("config-symlink-to-dev-zero", CONFIG, 2, setup=_symlink_named("bad.toml")),
    C("config-dev-zero", ("complexity", "--config", "/dev/zero"), 2),
    C("config-dangling-symlink", CONFIG, 2, setup=_symlink_named("bad.toml", "nowhere.toml")),
    C("config-50MB", CONFIG, 2, setup=_big_named("bad.toml")),
    C("config-missing", ("complexity", "--config", "missing.toml"), 2),
    C("config-symlink-loop", CONFIG, 2, setup=_symlink_named("bad.toml", "bad.toml")),
    C("config-sizes-100KB-string", CONFIG, 2,
      setup=_write("bad.toml", 'algorithm = "dtransformer"\nsizes = "' + "x" * 100_000 + '"\n'),
      note="the value is named in a bounded line, not echoed whole"),
    C("config-unknown-100KB-key", CONFIG, 2,
      setup=_write("bad.toml", 'algorithm = "dtransformer"\n"' + "k" * 100_000 + '" = 1\n')),
    C("config-empty", CONFIG, 2, setup=_write("bad.toml", "")),
    C("config-malformed", CONFIG, 2, setup=_write("bad.toml", "algorithm = \n[sizes\n")),
    C("config-algorithm-int", CONFIG, 2, setup=_write("bad.toml", _config(algorithm="algorithm = 5"))),
    C("config-algorithm-not-a-model", CONFIG, 2,
      setup=_write("bad.toml", _config(algorithm='algorithm = "attention"'))),
    C("config-algorithm-injection", CONFIG, 2, setup=_write("bad.toml", _config(algorithm=f'algorithm = "{INJECT}"'))),
    C("config-unknown-top-key", CONFIG, 2, setup=_write("bad.toml", _config(extra_top="colour = 'red'"))),
    C("config-unknown-size", CONFIG, 2, setup=_write("bad.toml", _config(extra="d_foo = 3"))),
    C("config-unknown-option", CONFIG, 2, setup=_write("bad.toml", _config(tied="frobnicate = true"))),
    C("config-size-string", CONFIG, 0, setup=_write("bad.toml", _config(d_e='d_e = "128"')),
      contains=("parameters",), note='"128" is 128: a number means the same however it is spelled'),
    C("config-size-string-not-a-number", CONFIG, 2, setup=_write("bad.toml", _config(d_e='d_e = "d"')),
      contains=("names 'd'",)),
    C("config-size-float-whole", CONFIG, 0, setup=_write("bad.toml", _config(d_e="d_e = 64.0")),
      contains=("parameters          114,688",), note="64.0 is 64: a number means the same however it is spelled"),
    C("config-size-inf", CONFIG, 2, setup=_write("bad.toml", _config(d_e="d_e = inf"))),
    C("config-size-negative", CONFIG, 2, setup=_write("bad.toml", _config(d_e="d_e = -64"))),
    C("config-size-zero-layers", CONFIG, 2, setup=_write("bad.toml", _config(L="L = 0"))),
    C("config-size-10**400", CONFIG, 2, setup=_write("bad.toml", _config(d_e=f"d_e = {10**400}")),
      note="a size no model has: refused as bad input (exit 2), not an internal error"),
    C("config-seq-len-10**400", CONFIG, 2,
      setup=_write("bad.toml", _config(seq_len=f"seq_len = {10**400}", ell_max=f"ell_max = {10**400}")),
      note="ℓ = ℓ_max = 10**400 is within every stated constraint, but no figure of it is meaningful"),
    C("config-size-datetime", CONFIG, 2, setup=_write("bad.toml", _config(d_e="d_e = 1979-05-27T07:32:00Z"))),
    C("config-sizes-not-a-table", CONFIG, 2,
      setup=_write("bad.toml", 'algorithm = "dtransformer"\nsizes = 3\n')),
    C("config-options-array", CONFIG, 2,
      setup=_write("bad.toml", 'algorithm = "dtransformer"\noptions = [1, 2]\n')),
    C("config-seq-len-bool", CONFIG, 2, setup=_write("bad.toml", _config(seq_len="seq_len = true"))),
    C("config-seq-len-over-ell-max", CONFIG, 2, setup=_write("bad.toml", _config(seq_len="seq_len = 1000"))),
    C("config-n-kv-heads-not-a-divisor", CONFIG, 2,
      setup=_write("bad.toml", _config(H="H = 12", d_e="d_e = 768", tied="n_kv_heads = 5"))),
    C("config-n-kv-heads-float-whole", CONFIG, 0, setup=_write("bad.toml", _config(tied="n_kv_heads = 2.0")),
      contains=("parameters",), note="2.0 is the count 2: a number means the same however it is spelled"),
    C("config-n-kv-heads-float", CONFIG, 2, setup=_write("bad.toml", _config(tied="n_kv_heads = 2.5"))),
    C("config-option-eps-string", CONFIG, 2, setup=_write("bad.toml", _config(tied='eps = "1e-5"'))),
    C("config-option-eps-nan", CONFIG, 2, setup=_write("bad.toml", _config(tied="eps = nan"))),
    C("config-option-injection", CONFIG, 2, setup=_write("bad.toml", _config(tied=f'activation = "{INJECT}"'))),
    C("config-size-key-injection", CONFIG, 2, setup=_write("bad.toml", _config(extra=f'"{INJECT}" = 1'))),
    C("config-size-formula-negative", CONFIG, 2, contains=("is -64",),
      setup=_write("bad.toml", _config(d_e='d_e = "0 - 64"'))),
    C("config-size-float-not-whole", CONFIG, 2, contains=("is 129/2",),
      setup=_write("bad.toml", _config(d_e="d_e = 64.5"))),
    C("config-name-injection-is-data", CONFIG + ("--json",), 0,
      setup=_write("bad.toml", _config(name=f'name = "{INJECT}"')), contains=("touch pwned",),
      note="a name is only data: printed, never run (no file 'pwned' appears)"),

    # ---------------------------------------------------------------- complexity: presets and flags
    C("complexity-seq-len-0", ("complexity", "gpt2", "--seq-len", "0"), 2),
    C("complexity-seq-len-negative", ("complexity", "gpt2", "--seq-len", "-1"), 2),
    C("complexity-seq-len-10**30", ("complexity", "gpt2", "--seq-len", str(10**30)), 2),
    C("complexity-seq-len-5000-digits", ("complexity", "gpt2", "--seq-len", "9" * 5000), 2),
    C("complexity-seq-len-float", ("complexity", "gpt2", "--seq-len", "1.5"), 2),
    C("complexity-kv-window-0", ("complexity", "gpt2", "--kv-window", "0"), 2),
    C("complexity-kv-window-negative", ("complexity", "gpt2", "--kv-window", "-4096", "--json"), 2),
    C("complexity-kv-window-text", ("complexity", "gpt2", "--kv-window", "wide"), 2),
    C("complexity-kv-window-2**60", ("complexity", "gpt2", "--kv-window", str(2**60)), 2),
    C("complexity-kv-window-encoder", ("complexity", "bert-base", "--kv-window", "16", "--json"), 2,
      note="an encoder has no KV cache to window"),
    C("complexity-dtype-int3", ("complexity", "gpt2", "--dtype", "int3"), 2),
    C("complexity-seq-len-text", ("complexity", "gpt2", "--seq-len", "abc"), 2),
    C("complexity-bert-seq-len-513", ("complexity", "bert-base", "--seq-len", "513"), 2,
      note="exceeds bert-base's 512-position table"),
    C("complexity-unknown-preset", ("complexity", "gpt5"), 2),
    C("complexity-preset-and-config", ("complexity", "gpt2", "--config", "good.toml"), 2,
      setup=_write("good.toml", GOOD_CONFIG)),
    C("complexity-neither", ("complexity",), 2),
    C("complexity-batch-0", ("complexity", "gpt2", "--batch", "0"), 2),
    C("complexity-batch-4000-digits", ("complexity", "gpt2", "--batch", "1" + "0" * 4000), 2,
      note="out of range: refused in a bounded line (the integer is not echoed whole)"),
    C("complexity-dtype-fp8", ("complexity", "gpt2", "--dtype", "fp8"), 2),
    C("complexity-symbolic-seq-len", ("complexity", "gpt2", "--symbolic", "--seq-len", "5"), 2,
      note="--seq-len has no effect with --symbolic: refused (the source was being changed to do that)"),
    C("complexity-symbolic-batch", ("complexity", "gpt2", "--symbolic", "--batch", "2"), 2),
    C("complexity-symbolic-dtype", ("complexity", "gpt2", "--symbolic", "--dtype", "bf16"), 2),
    C("complexity-list-with-preset", ("complexity", "--list", "gpt2"), 2),
    C("complexity-json-error", ("complexity", "gpt2", "--seq-len", "5000", "--json"), 2),
    C("complexity-captioner-without-seq-len", ("complexity", "show-attend-tell-coco", "--json"), 2),
    C("complexity-kv-unknown", ("complexity", "gpt2", "--kv", "virtual"), 2),
    C("complexity-kv-paged-encoder", ("complexity", "bert-base", "--kv", "paged", "--json"), 2),
    C("complexity-kv-paged-symbolic", ("complexity", "gpt2", "--kv", "paged", "--symbolic"), 2),
    C("complexity-block-without-paged", ("complexity", "gpt2", "--block", "16"), 2),
    C("complexity-samples-without-paged", ("complexity", "gpt2", "--samples", "4"), 2),
    C("complexity-block-0", ("complexity", "gpt2", "--kv", "paged", "--block", "0"), 2),
    C("complexity-block-text", ("complexity", "gpt2", "--kv", "paged", "--block", "sixteen"), 2),
    C("complexity-block-4000-digits", ("complexity", "gpt2", "--kv", "paged", "--block", "1" + "0" * 4000), 2),
    C("complexity-samples-negative", ("complexity", "gpt2", "--kv", "paged", "--samples", "-3"), 2),
    C("complexity-paged-block-2**50", ("complexity", "gpt2", "--kv", "paged", "--block", str(2**50), "--json"), 0),
    C("complexity-swin-seq-len", ("complexity", "swin-t", "--seq-len", "10"), 2,
      note="Swin has no sequence length: its tokens are its grid's patches"),
    C("complexity-swin-paged", ("complexity", "swin-t", "--kv", "paged"), 2),
    C("show-swin-mlp-ratio-0", ("show", "swin", "-o", "mlp_ratio=0"), 2),
    C("show-window-shifted-word", ("show", "window_mhattention", "-o", "shifted=maybe"), 2),

    # ---------------------------------------------------------------- show
    C("show-unknown-algorithm", ("show", "nosuch"), 2),
    C("show-unknown-algorithm-not-utf8", ("show", b"\xff\xfe"), 2),
    C("show-rope-theta-nan", ("show", "attention", "-o", "rope=half", "-o", "rope_theta=nan"), 2),
    C("show-rope-theta-without-rope", ("show", "attention", "-o", "rope_theta=500000"), 2),
    C("show-rope-fraction-over-1", ("show", "mhattention", "-o", "rope=half", "-o", "rope_fraction=1.5"), 2),
    C("show-rope-style-word", ("show", "mhattention", "-o", "rope=sideways"), 2),
    C("show-rope-llama3-band-inverted", ("show", "dtransformer", "-o", "rope=half", "-o", "rope_scaling=llama3",
                                        "-o", "rope_low=4", "-o", "rope_high=1"), 2),
    C("show-kv-rope-dynamic", ("show", "kv_dtransformer", "-o", "rope=half", "-o", "rope_scaling=dynamic"), 2),
    C("show-score-cap-0", ("show", "attention", "-o", "score_cap=0"), 2),
    C("show-score-cap-inf", ("show", "attention", "-o", "score_cap=inf"), 2),
    C("show-qk-norm-word", ("show", "mhattention", "-o", "qk_norm=batch"), 2),
    C("show-option-empty-key", ("show", "attention", "-o", "=1"), 2),
    C("show-option-no-equals", ("show", "attention", "-o", "x"), 2),
    C("show-option-bad-key", ("show", "attention", "-o", "1a=2"), 2),
    C("show-unknown-option", ("show", "attention", "-o", "nosuch=1"), 2),
    C("show-bias-maybe", ("show", "attention", "-o", "bias=maybe"), 2),
    C("show-eps-negative", SHOW_LN + ("eps=-1",), 2),
    C("show-eps-nan", SHOW_LN + ("eps=nan",), 2),
    C("show-eps-inf", SHOW_LN + ("eps=inf",), 2),
    C("show-eps-100KB-number", SHOW_LN + ("eps=1" + "0" * 100_000,), 2),
    C("show-n-kv-heads-0", ("show", "mhattention", "-o", "n_kv_heads=0"), 2),
    C("show-n-kv-heads-negative", ("show", "mhattention", "-o", "n_kv_heads=-1"), 2),
    C("show-n-kv-heads-text", ("show", "mhattention", "-o", "n_kv_heads=abc"), 2),
    C("show-n-kv-heads-5-symbolic-H", ("show", "mhattention", "-o", "n_kv_heads=5"), 0,
      note="H is a symbol in `show`: 5 | H cannot be decided, so the variant is shown (exit 0)"),
    C("show-option-twice", ("show", "attention", "-o", "bias=true", "-o", "bias=false"), 2),
    C("show-empty-nan-is-a-policy", ("show", "attention", "-o", "empty=nan", "--json"), 0, contains=('"nan"',),
      note="empty=nan is a documented value: it must succeed"),
    C("show-empty-unknown", ("show", "attention", "-o", "empty=maybe"), 2),
    C("show-params-latex", ("show", "attention", "--params", "--latex"), 0, contains=("\\begin{tabular}",)),
    C("show-json-and-latex", ("show", "attention", "--json", "--latex"), 2),
    C("show-convention-with-params", ("show", "attention", "--params", "--convention", "full"), 2),
    C("show-unknown-convention", ("show", "attention", "--convention", "flops"), 2),
    C("show-option-100KB-value", ("show", "attention", "-o", "empty=" + "x" * 100_000), 2),
    C("show-option-python-injection", ("show", "attention", "-o", f"empty={INJECT}"), 2),
    C("show-option-shell-injection", ("show", "dtransformer", "-o", f"activation={SHELL}"), 2),
    C("show-option-json-error", ("show", "attention", "-o", "bias=maybe", "--json"), 2),
    C("show-tau-zero", ("show", "dinference", "-o", "tau=0"), 2),
    C("show-tau-nan", ("show", "dinference", "-o", "tau=nan"), 2),
    # the lecture notes' systems: options that apply to another cell, words for numbers, impossible pairs
    C("show-rnn-unknown-cell", ("show", "rnn_layer", "-o", "cell=transformer"), 2),
    C("show-rnn-reset-on-lstm", ("show", "rnn_layer", "-o", "cell=lstm", "-o", "reset=after"), 2,
      note="reset applies to the GRU only: an option that would change nothing is refused"),
    C("show-rnn-bias-true", ("show", "lstm_cell", "-o", "bias=true"), 2),
    C("show-seq2seq-dot-bidirectional", ("show", "seq2seq", "-o", "score=dot"), 2,
      note="a dot score needs states as wide as the decoder's: a bidirectional encoder's are twice"),
    C("show-conv-padding-same", ("show", "conv1d", "-o", "padding=same", "--json"), 0, contains=('"same"',)),
    C("show-conv-padding-word", ("show", "conv1d", "-o", "padding=wide"), 2),
    C("show-conv-padding-injection", ("show", "conv1d", "-o", f"padding={INJECT}"), 2),
    C("show-conv-stride-0", ("show", "conv1d", "-o", "stride=0"), 2),
    C("show-conv-stride-2", ("show", "conv1d", "-o", "stride=2"), 0, contains=("floor",)),
    C("show-sat-penalty-negative", ("show", "show_attend_tell_loss", "-o", "penalty=-1"), 2),
    C("show-sat-penalty-inf", ("show", "show_attend_tell_loss", "-o", "penalty=inf"), 2),
    C("table1-even-kernel", ("table1", "--kernel", "4"), 2),
    C("table1-huge-n", ("table1", "--measure-at", "10" * 50), 2),
    C("table1-json", ("table1", "--json"), 0, contains=('"parity"',)),
    C("table1-old-n-text", ("table1", "--n", "abc"), 2),                       # the old spelling, as checked
    C("graph-old-n-negative", ("graph", "full", "--n", "-1"), 2),
    C("graph-context-len-0", ("graph", "cross", "--seq-len", "4", "--context-len", "0"), 2),
    C("graph-draw-stdout", ("graph", "full", "--seq-len", "4", "--draw", "-"), 2),

    # ------------------------------------- graph: huge built-in patterns answered from their structure
    C("graph-full-1e6", ("graph", "full", "--seq-len", "1000000", "--json"), 0, contains=('"edges": 1000000000000',)),
    C("graph-causal-3e6", ("graph", "causal", "--seq-len", "3000000", "--json"), 0),
    C("graph-sliding-window-1e9", ("graph", "sliding-window", "--seq-len", "1000000000", "--window", "4", "--json"), 0,
      contains=('"layers_to_coverage": 333333333',)),
    C("graph-full-1e30", ("graph", "full", "--seq-len", "1" + "0" * 30, "--json"), 0),
    C("graph-strided-1e12", ("graph", "strided", "--seq-len", "1" + "0" * 12, "--stride", "1", "--json"), 0),
    C("graph-swin-1e5x1e5", ("graph", "swin", "--grid", "100000x100000", "--window", "4", "--shifted"), 0),
    C("graph-layers-1e12-window", ("graph", "sliding-window", "--seq-len", "64", "--window", "4", "--layers",
                                   "1000000000000"), 2, contains=("memory limit",)),

    # ---------------------------------------------------------------- graph: sizes refused before any work
    C("graph-random-1e9", ("graph", "random", "--seq-len", "1000000000", "--random", "3"), 2,
      contains=("memory limit",)),
    C("graph-full-1e6-draw", ("graph", "full", "--seq-len", "1000000", "--draw", "mask.png"), 2,
      contains=("memory limit",)),
    C("graph-swin-1e5x1e5-draw", ("graph", "swin", "--grid", "100000x100000", "--window", "4", "--draw", "m.png"), 2,
      contains=("memory limit",)),
    C("graph-layers-1e8", ("graph", "sliding-window", "--seq-len", "64", "--window", "4", "--layers", "100000000"), 2,
      contains=("memory limit",)),
    C("graph-edgelist-n-1e9", ("graph", "edgelist", "--seq-len", "1000000000", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 1\n1 2\n"), contains=("memory limit",),
      note="--seq-len alone decides the size of an edgelist pattern: it must be estimated like the others"),
    C("graph-max-memory-text", ("graph", "full", "--seq-len", "8", "--max-memory", "abc"), 2),
    C("graph-n-0", ("graph", "full", "--seq-len", "0"), 2),
    C("graph-n-missing", ("graph", "full"), 2),
    C("graph-window-negative", ("graph", "sliding-window", "--seq-len", "64", "--window", "-1"), 2),
    C("graph-swin-grid-0x5", ("graph", "swin", "--grid", "0x5", "--window", "4"), 2),
    C("graph-swin-grid-8x8x8", ("graph", "swin", "--grid", "8x8x8", "--window", "4"), 2),
    C("graph-swin-grid-superscript", ("graph", "swin", "--grid", "²x²", "--window", "4"), 2,
      note="'²'.isdigit() is True but int('²') raises ValueError"),
    C("graph-swin-grid-huge", ("graph", "swin", "--grid", "9" * 30 + "x1", "--window", "4"), 2),
    C("graph-swin-n-disagrees", ("graph", "swin", "--grid", "8x8", "--window", "4", "--seq-len", "65"), 2),
    C("graph-window-on-full", ("graph", "full", "--seq-len", "8", "--window", "4"), 2),
    C("graph-stride-on-causal", ("graph", "causal", "--seq-len", "8", "--stride", "2"), 2),
    C("graph-random-more-than-n", ("graph", "random", "--seq-len", "10", "--random", "100"), 2),
    C("graph-global-more-than-n", ("graph", "global-local", "--seq-len", "16", "--window", "4", "--global", "100"), 2),
    C("graph-json-error", ("graph", "full", "--seq-len", "0", "--json"), 2),
    # edge lists
    C("graph-edgelist-missing-file", ("graph", "edgelist", "--seq-len", "4", "--file", "missing.txt"), 2),
    C("graph-edgelist-no-file", ("graph", "edgelist", "--seq-len", "4"), 2),
    C("graph-edgelist-binary", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", bytes(range(256)) * 4)),
    C("graph-edgelist-fifo", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_fifo_named("edges.txt")),
    C("graph-edgelist-dev-zero", ("graph", "edgelist", "--seq-len", "4", "--file", "/dev/zero"), 2),
    C("graph-edgelist-directory", ("graph", "edgelist", "--seq-len", "4", "--file", "edges"), 2,
      setup=_directory_named("edges")),
    C("graph-edgelist-50MB", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_big_text_named("edges.txt"), contains=("repeats the edge",), hang_limit=240,
      note="under the edge list's size cap (formal.graphs.edgelist.max_bytes, 128 MiB by default), so read: its "
           "13 million lines are parsed (7 s measured on a quiet machine, 24 s on a loaded one) and the "
           "repeated edge named"),
    C("graph-edgelist-bad-line", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 1\n1 x\n")),
    C("graph-edgelist-three-tokens", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 1\n1 2 3\n"),
      note="a line that is not 'key query' (a third token) is refused, not silently truncated"),
    C("graph-edgelist-injection", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 1 {'w': " + INJECT + "}\n"),
      note="never evaluated (no file 'pwned'); refused as a line that is not 'key query'"),
    C("graph-edgelist-out-of-range", ("graph", "edgelist", "--seq-len", "10", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 1\n0 500\n")),
    C("graph-edgelist-negative-node", ("graph", "edgelist", "--seq-len", "10", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "-1 3\n")),
    C("graph-edgelist-huge-node", ("graph", "edgelist", "--seq-len", "10", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", "0 " + "9" * 30 + "\n")),
    C("graph-edgelist-not-utf8", ("graph", "edgelist", "--seq-len", "4", "--file", "edges.txt"), 2,
      setup=_write("edges.txt", b"0 1\n\xe9 2\n")),
    # pictures
    C("graph-draw-missing-folder", ("graph", "full", "--seq-len", "8", "--draw", "missing/x.png"), 2),
    C("graph-draw-directory", ("graph", "full", "--seq-len", "8", "--draw", "pictures"), 2,
      setup=_directory_named("pictures")),
    C("graph-draw-proc", ("graph", "full", "--seq-len", "8", "--draw", "/proc/x"), 2),
    C("graph-draw-dev-null-folder", ("graph", "full", "--seq-len", "8", "--draw", "/dev/x.png"), 2),
    C("graph-draw-unknown-format", ("graph", "full", "--seq-len", "8", "--draw", "out.xyz"), 2, files=("out.xyz",)),
    C("graph-draw-fifo", ("graph", "full", "--seq-len", "8", "--draw", "pipe.png"), 2,
      setup=_fifo_named("pipe.png")),
    C("graph-draw-refused-before-work", ("graph", "full", "--seq-len", "1000000", "--draw", "missing/x.png"), 2),
    C("graph-draw-not-utf8-name", ("graph", "full", "--seq-len", "8", "--json", "--draw", b"\xff.png"), 0,
      files=(os.fsdecode(b"\xff.png"),),
      note="a file name that is not UTF-8 is a legal Linux path: written, and the JSON report stays valid"),

    # ---------------------------------------------------------------- verify (exit 2 before any check runs)
    C("verify-json-sys", ("verify", "--json", "/sys/report.json"), 2),
    C("verify-json-directory", ("verify", "--json", "out"), 2, setup=_directory_named("out")),
    C("verify-json-proc", ("verify", "--json", "/proc/x/y"), 2),
    C("verify-json-missing-folder", ("verify", "--json", "missing/report.json"), 2),
    C("verify-only-comma", ("verify", "--only", ","), 2),
    C("verify-jobs-0", ("verify", "--jobs", "0"), 2, contains=("--jobs",)),
    C("verify-jobs-negative", ("verify", "--jobs", "-2"), 2, contains=("--jobs",)),
    C("verify-jobs-text", ("verify", "--jobs", "all"), 2, contains=("--jobs",)),
    C("verify-jobs-huge", ("verify", "--jobs", "10" * 20), 2, contains=("--jobs",)),
    C("verify-mutants-with-variants", ("verify", "--mutants", "--variants", "all"), 2, contains=("--variants",)),
    # verify's --variants, --scheduler and --dry-run refusals are checked in one process by
    # tests/reference/verification/test_campaigns.py; here the few a process meets hardest (the budget below)
    C("verify-variants-trailing-comma", ("verify", "--variants", "bias=true,"), 2, contains=("KEY=VALUE",)),
    C("verify-variants-unexampled", ("verify", "--variants", "empty=error"), 2, contains=("has no example",)),
    C("verify-variants-huge", ("verify", "--variants", "bias=" + "x" * 100_000, "--only", "attention"), 2,
      contains=("--variants",)),
    C("verify-scheduler-garbage", ("verify", "--scheduler", "a b"), 2, contains=("--scheduler",)),
    C("verify-dry-run-json", ("verify", "--variants", "all", "--dry-run", "--json", "-"), 2,
      contains=("--dry-run",)),
    C("verify-only-nosuch", ("verify", "--only", "nosuch"), 2),
    C("verify-refused-writes-nothing", ("verify", "--json", "report.json", "--only", "nosuch"), 2,
      files=(), note="a refused run leaves neither the report nor a temporary file"),
    C("verify-seed-negative", ("verify", "--seed", "-1"), 2),
    C("verify-profile-nope", ("verify", "--profile", "nope"), 2),

    # ---------------------------------------------------------------- check (claims files)
    C("check-no-file", ("check",), 2, contains=("--catalogue",)),
    C("check-paged-zero-block", ("check", "c.toml"), 2, stderr="line+report",
      contains=("block = 0 must be a positive integer",), setup=_paged_claim("{ block = 0 }")),
    C("check-paged-text-block", ("check", "c.toml"), 2, stderr="line+report",
      contains=("block 'x' names 'x'",), setup=_paged_claim('{ block = "x" }')),
    C("check-paged-not-a-table", ("check", "c.toml"), 2, stderr="line+report", contains=("paged must be a table",),
      setup=_paged_claim("5")),
    C("check-paged-unknown-key", ("check", "c.toml"), 2, stderr="line+report", contains=("paged has no 'pages'",),
      setup=_paged_claim("{ pages = 3 }")),
    C("check-paged-block-2**60", ("check", "c.toml"), 2, stderr="line+report", contains=("at most 2**50",),
      setup=_paged_claim("{ block = 1152921504606846976 }")),
    C("check-paged-negative-samples", ("check", "c.toml"), 2, stderr="line+report",
      contains=("samples = -1 must be a positive integer",), setup=_paged_claim("{ samples = -1 }")),
    C("check-missing-file", ("check", "missing.toml"), 2),
    C("check-directory", ("check", "."), 2, contains=("not a regular file",)),
    C("check-dev-zero", ("check", "/dev/zero"), 2),
    C("check-binary", ("check", "c.toml"), 2, setup=_write("c.toml", bytes(range(256))), contains=("UTF-8",)),
    C("check-not-toml", ("check", "c.toml", "--json"), 2, setup=_write("c.toml", "[[claim]\nid = 1")),
    C("check-deep-nesting", ("check", "c.toml"), 2, setup=_write("c.toml", "x = " + "[" * 5000 + "]" * 5000)),
    C("check-no-claims", ("check", "c.toml"), 2, setup=_write("c.toml", "")),
    C("check-top-level-key", ("check", "c.toml"), 2, setup=_write("c.toml", "title = 'x'\n")),
    C("check-claim-not-a-table", ("check", "c.toml"), 2, setup=_write("c.toml", "claim = [1, 2]\n")),
    C("check-invalid-claim-json", ("check", "c.toml", "--json"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM + "nosuch = 1\n"), contains=("unknown field",),
      note="the file's other claims are still judged: one JSON object on stdout, one line on stderr"),
    C("check-invalid-claim-text", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'approx = "124M"\nequals = 1'))),
    C("check-hostile-formula", ("check", "c.toml", "--json"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"',
                                           'equals = "__import__(\'os\').system(\'touch pwned\')"')),
      contains=("not part of a formula",), note="never executed: no file pwned appears"),
    C("check-huge-power", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'equals = "((10**64)**64)**64"'))),
    C("check-long-formula", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'equals = "' + "1+" * 100000 + '1"'))),
    C("check-deep-parentheses", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'equals = "' + "(" * 500 + "1" + ")" * 500 + '"'))),
    C("check-unknown-preset", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('"gpt2"', '"gpt5"'))),
    C("check-unreadable-number", ("check", "c.toml"), 2,
      setup=_write("c.toml", CLAIM.replace('quantity', 'sizes = { d_e = ' + "9" * 5000 + ' }\nquantity'))),
    C("check-huge-size", ("check", "c.toml"), 2, stderr="line+report", contains=("at most 2**50",),
      setup=_write("c.toml", CLAIM.replace('quantity', 'sizes = { d_e = ' + "9" * 400 + ' }\nquantity'))),
    # a number spelled as a formula, a TOML float, a bound size: one gate (issue: one gate for every number)
    C("check-size-formula-negative", ("check", "c.toml"), 2, stderr="line+report", contains=("is -12",),
      setup=_claim('model = "gpt2"\nsizes = { L = "-12" }\nquantity = "params.total"\nat_least = 0\n')),
    C("check-size-formula-fraction", ("check", "c.toml"), 2, stderr="line+report", contains=("is 1/2",),
      setup=_claim('algorithm = "mhattention"\nsizes = { d_x = "1/2" }\nquantity = "params"\nat_least = 0\n')),
    C("check-tokens-formula-negative", ("check", "c.toml"), 2, stderr="line+report", contains=("is -300",),
      setup=_claim('model = "gpt2"\ntokens = "0 - 300"\nquantity = "training.flops"\nat_most = 0\n')),
    C("check-batch-formula-negative", ("check", "c.toml"), 2, stderr="line+report", contains=("is -2",),
      setup=_claim('model = "gpt2"\nbatch = "0-2"\nquantity = "memory.activations_bytes"\nat_most = 0\n')),
    C("check-seq-len-string-past-ell-max", ("check", "c.toml"), 2, stderr="line+report", contains=("ell_max",),
      setup=_claim('model = "gpt2"\nseq_len = "5000"\nquantity = "flops.forward"\nat_least = 0\n')),
    C("check-tie-not-whole", ("check", "c.toml"), 2, stderr="line+report", contains=("8/3",),
      setup=_claim('algorithm = "mhattention"\nsizes = { d_x = 8, H = 3, d_attn = "d_x/H" }\nquantity = "params"\n'
                   'at_least = 0\n')),
    C("check-ratio-to-zero", ("check", "c.toml"), 2, stderr="line+report", contains=("is 0",),
      setup=_claim('algorithm = "attention"\nquantity = "flops"\nratio_to = { algorithm = "token_embedding" }\n'
                   'leading = "1"\n')),
    C("check-float-claim-read-as-written", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=_claim('model = "gpt2"\nquantity = "params.total"\nequals = 124439808.0000000001\n'),
      note="the decimal as written, not the binary float 124439808.0: it fails"),
    C("check-abs-tol-just-under-one", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=_claim('model = "gpt2"\nquantity = "params.total"\napprox = 124439809\nabs_tol = 0.9999999999999999999\n')),
    C("check-bound-n-linear-in-layers", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=_claim('graph = "sliding-window"\nargs = { n = 1000000, window = 4096 }\n'
                   'quantity = "layers.receptive_field.max"\ntheta = "layers"\nin = ["layers"]\n'),
      note="a size the claim binds stays bound: at n = 10^6 the field stops growing, so it is not linear"),
    C("check-padded-convolution-causal-decided", ("check", "c.toml", "--json"), 0, contains=('"as_expected": true',),
      setup=_claim('algorithm = "conv1d"\noptions = { padding = 1 }\nsizes = { k = 3 }\nproperty = "causal"\n'
                   'expect = "fails"\n')),
    C("complexity-seq-len-formula-past-2**50", ("complexity", "gpt2", "--seq-len", "2**60"), 2,
      contains=("is 1152921504606846976",)),
    C("check-graph-huge-random", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "r"\ngraph = "random"\nargs = { n = 1000000000, random = 3 }\n'
                             'quantity = "edges"\nequals = 1\n'), contains=("memory limit",)),
    C("check-graph-draw-refused", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "d"\ngraph = "full"\nargs = { n = 8, draw = "x.png" }\n'
                             'quantity = "edges"\nequals = 64\n'), note="a claim never writes a file"),
    C("check-timeout-0", ("check", "c.toml", "--timeout", "0"), 2, setup=_write("c.toml", CLAIM)),
    C("check-timeout-text", ("check", "c.toml", "--timeout", "soon"), 2, setup=_write("c.toml", CLAIM)),
    C("check-time-budget-0", ("check", "c.toml", "--time-budget", "0"), 2, setup=_write("c.toml", CLAIM)),
    C("check-time-budget-nan", ("check", "c.toml", "--time-budget", "nan", "--json"), 2,
      setup=_write("c.toml", CLAIM)),
    C("check-time-budget-negative", ("check", "c.toml", "--time-budget", "-5"), 2, setup=_write("c.toml", CLAIM)),
    C("check-time-budget-text", ("check", "c.toml", "--time-budget", "later"), 2, setup=_write("c.toml", CLAIM)),
    C("check-jobs-0", ("check", "c.toml", "--jobs", "0"), 2, setup=_write("c.toml", CLAIM), contains=("--jobs",)),
    C("check-jobs-huge", ("check", "c.toml", "--jobs", "10" * 20), 2, setup=_write("c.toml", CLAIM),
      contains=("--jobs",)),
    C("check-scheduler-local-0", ("check", "c.toml", "--scheduler", "local:0"), 2, setup=_write("c.toml", CLAIM),
      contains=("local:0",)),
    C("check-scheduler-garbage", ("check", "c.toml", "--scheduler", "a b"), 2, setup=_write("c.toml", CLAIM),
      contains=("--scheduler",)),
    C("check-jobs-and-scheduler", ("check", "c.toml", "--jobs", "2", "--scheduler", "local:2"), 2,
      setup=_write("c.toml", CLAIM), contains=("give one of them",)),
    C("check-jobs-with-time-budget", ("check", "c.toml", "--jobs", "2", "--time-budget", "60"), 2,
      setup=_write("c.toml", CLAIM), contains=("--time-budget",)),
    C("check-tokens-in-bytes", ("check", "c.toml", "--json"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "t"\nmodel = "gpt2"\ntokens = "300 GB"\n'
                             'quantity = "training.flops"\napprox = "1e21"\n'), contains=("whole number of tokens",)),
    C("check-kv-window-0", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "w"\nmodel = "gpt2"\nkv_window = 0\n'
                             'quantity = "kv_cache.bytes"\nequals = 1\n'), contains=("kv_window = 0",)),
    C("check-rounds-to-a-formula", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'rounds_to = "sqrt(2)"')),
      contains=("rounds_to",)),
    C("check-empty-ratio", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", CLAIM.replace('approx = "124M"', 'equals = 1\nratio_to = {}')),
      contains=("ratio_to is empty",)),
    C("check-property-huge-size", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "p"\nalgorithm = "attention"\nproperty = "causal"\n'
                             'sizes = { ell_x = 1000000000 }\n'), contains=("from 1 to 64",)),
    C("check-non-finite-output-json", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=_write("c.toml", '[[claim]]\nid = "s"\nop = "softmax"\ninputs = { x = [inf, nan] }\n'
                             'equals = [1, 0]\n'), note="NaN in the output: still strict JSON on stdout"),
    C("check-expanding-sizes", ("check", "c.toml"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "x"\nalgorithm = "attention"\nsizes = { d_x = "(a+b+c)**12", '
                             'd_z = "(a+b+c+e)**10", d_attn = "(a+b+c+e+f)**7" }\nquantity = "flops"\n'
                             'equals = "(a+b+c+e+f)**9"\n'), contains=("terms",),
      note="refused from a bound on the terms before sympy expands anything"),
    C("check-only-comma", ("check", "c.toml", "--only", ","), 2, setup=_write("c.toml", CLAIM)),
    C("check-only-unknown", ("check", "c.toml", "--only", "nosuch"), 2, setup=_write("c.toml", CLAIM)),
    C("check-fails-exit-1", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=_write("c.toml", CLAIM.replace('"124M"', '"117M"'))),
    C("check-holds", ("check", "c.toml", "--json"), 0, setup=_write("c.toml", CLAIM), contains=('"holds"',)),
    C("check-noisy-implementation", ("check", "c.toml", "--json"), 1, stderr="report",
      setup=lambda cwd: (_write("impl.py", NOISY_TARGET)(cwd),
                         _write("c.toml", '[[claim]]\nid = "i"\nimplementation = "impl.py:attention"\n'
                                          'algorithm = "attention"\n')(cwd)),
      note="what the user's code prints (even 'Traceback', on fd 1 and 2) is captured by conform's worker: the "
           "JSON stays one object"),
    C("check-implementation-missing", ("check", "c.toml", "--json"), 2, stderr="line+report",
      setup=_write("c.toml", '[[claim]]\nid = "i"\nimplementation = "missing.py:f"\nalgorithm = "attention"\n')),

    # ---------------------------------------------------------------- prove
    C("prove-unknown-theorem", ("prove", "nosuch", "--json"), 2, contains=("no theorem",)),
    C("prove-list-with-names", ("prove", "--list", "kaplan-n"), 2),
    C("prove-one", ("prove", "kaplan-n", "--json"), 0, contains=('"rejected"',)),
    C("prove-mutants-with-theorems", ("prove", "--mutants", "kaplan-n"), 2, contains=("give no theorem names",)),
    C("prove-mutants-unknown", ("prove", "--mutants", "--only", "nosuch"), 2, contains=("no spec mutant",)),
    C("prove-mutants-jobs-zero", ("prove", "--mutants", "--jobs", "0"), 2),
    C("prove-about-alone", ("prove", "--about"), 2, contains=("go with --mutants",)),
    C("prove-mutants-list-with-jobs", ("prove", "--mutants", "--list", "--jobs", "2"), 2,
      contains=("has no meaning with it",)),
    C("prove-mutants-list", ("prove", "--mutants", "--list", "--json"), 0, contains=('"div-sqrt-by-d"',)),
    C("prove-mutants-timeout-0", ("prove", "--mutants", "--timeout", "0"), 2, contains=("--timeout",)),
    C("prove-mutants-timeout-inf", ("prove", "--mutants", "--timeout", "inf"), 2, contains=("finite",)),
    C("prove-timeout-alone", ("prove", "kaplan-n", "--timeout", "5"), 2, contains=("go with --mutants",)),
    C("prove-mutants-scheduler-garbage", ("prove", "--mutants", "--scheduler", "x" * 100_000), 2,
      contains=("neither local:N",)),
    C("prove-mutants-scheduler-and-jobs", ("prove", "--mutants", "--jobs", "2", "--scheduler", "local:2"), 2,
      contains=("give one of them",)),

    # ---------------------------------------------------------------- conform
    C("conform-missing-file", ("conform", "missing.py:f", "--algorithm", "attention"), 2),
    C("conform-no-function", ("conform", "impl.py", "--algorithm", "attention"), 2,
      setup=_write("impl.py", ATTENTION_TARGET)),
    C("conform-no-module", ("conform", "no_such_module_xyz:f", "--algorithm", "attention"), 2),
    C("conform-no-such-function", ("conform", "impl.py:nosuch", "--algorithm", "attention", "--json"), 2,
      setup=_write("impl.py", ATTENTION_TARGET)),
    C("conform-syntax-error", ("conform", "impl.py:attention", "--algorithm", "attention", "--json"), 1,
      setup=_write("impl.py", "def attention(X:\n    return X\n"),
      note="the implementation's module cannot be imported: its fault (reference/conformance/loading.py usage=False, "
           "reference/conformance/targets.py TargetFault.status = 1), one line on stderr"),
    C("conform-unknown-algorithm", ("conform", "impl.py:attention", "--algorithm", "nosuch"), 2,
      setup=_write("impl.py", ATTENTION_TARGET)),
    C("conform-dinference-tiny-tau", ("conform", "impl.py:dinference", "--algorithm", "dinference",
                                      "-o", "tau=1e-30", "--examples", "4", "--json"), 0,
      setup=_write("impl.py", DINFERENCE_TARGET),
      note="the target is the spec itself at τ = 1e-30: the spec must stay defined (no overflow) and pass"),
    C("conform-timeout-0", ("conform", "impl.py:attention", "--algorithm", "attention", "--timeout", "0"), 2),
    C("conform-timeout-nan", ("conform", "impl.py:attention", "--algorithm", "attention", "--timeout", "nan"), 2),
    C("conform-examples-0", ("conform", "impl.py:attention", "--algorithm", "attention", "--examples", "0"), 2),
    C("conform-max-size-1", ("conform", "impl.py:attention", "--algorithm", "attention", "--max-size", "1"), 2),
    C("conform-max-memory-text", ("conform", "impl.py:attention", "--algorithm", "attention",
                                  "--max-memory", "lots"), 2, contains=("--max-memory",)),
    C("conform-max-memory-0", ("conform", "impl.py:attention", "--algorithm", "attention", "--max-memory", "0"), 2),
    C("conform-max-memory-huge", ("conform", "impl.py:attention", "--algorithm", "attention",
                                  "--max-memory", "1e999"), 2),
    C("conform-examples-too-many", ("conform", "impl.py:attention", "--algorithm", "attention",
                                    "--examples", "100001"), 2),
    C("conform-max-size-too-large", ("conform", "impl.py:attention", "--algorithm", "attention",
                                     "--max-size", "1000000000"), 2,
      note="sizes past 4096 are refused before any example is drawn (the examples alone would not fit)"),
    C("conform-hoarding-target", ("conform", "impl.py:attention", "--algorithm", "attention", "--examples", "1",
                                  "--max-memory", "1G", "--json"), 1, setup=_write("impl.py", HOARDING_TARGET),
      stderr="report",
      note="the worker's address space is capped: 80 GB asked is a MemoryError (FAIL runs) within the limit, "
           "and the JSON stays one object"),
    C("conform-layout-diagonal", ("conform", "impl.py:attention", "--algorithm", "attention",
                                  "--layout", "diagonal"), 2),
    C("conform-wrong-output", ("conform", "impl.py:attention", "--algorithm", "attention", "--examples", "2",
                               "--json"), 1, setup=_write("impl.py", WRONG_TARGET), stderr="report",
      note="a property fails: the implementation's fault, exit 1, the report (JSON) on stdout"),
    C("conform-noisy-crashing-target", ("conform", "impl.py:attention", "--algorithm", "attention",
                                        "--examples", "2", "--json"), 1, setup=_write("impl.py", NOISY_TARGET),
      stderr="report",
      note="what the target prints (even the word Traceback, on fd 1 and 2) is captured, never passed on; "
           "the JSON stays one object"),
    C("conform-unknown-option", ("conform", "impl.py:attention", "--algorithm", "attention", "-o", "nosuch=1"), 2,
      setup=_write("impl.py", ATTENTION_TARGET)),
    # Show, Attend and Tell's variants: the gate, f_att's nonlinearity and biases, the initial states, the output.
    C("show-sat-gate-word", ("show", "show_attend_tell", "-o", "gate=matrix"), 2, contains=("gate", "matrix")),
    C("show-sat-gate-true", ("show", "show_attend_tell", "-o", "gate=true"), 0, contains=("w_β",)),
    C("show-sat-activation-gelu", ("show", "show_attend_tell", "-o", "activation=gelu"), 2, contains=("gelu",)),
    C("show-sat-score-bias-word", ("show", "show_attend_tell_loss", "-o", "score_bias=yes"), 2,
      contains=("score_bias", "yes")),
    C("show-sat-init-mlp", ("show", "show_attend_tell", "-o", "init=mlp"), 2, contains=("init", "mlp")),
    C("show-sat-output-logits", ("show", "show_attend_tell_loss", "-o", "output=logits"), 2,
      contains=("output", "logits")),
    C("show-attention-relu-without-additive", ("show", "attention", "-o", "activation=relu"), 2,
      contains=("activation",)),
    # conform --identify: the search refuses what it cannot search before starting the function
    C("identify-budget-0", ("conform", "impl.py:attention", "--algorithm", "attention", "--identify",
                            "--budget", "0"), 2, contains=("--budget",)),
    C("identify-budget-alone", ("conform", "impl.py:attention", "--algorithm", "attention", "--budget", "5"), 2,
      setup=_write("impl.py", ATTENTION_TARGET), contains=("--identify",)),
    C("identify-all-fixed", ("conform", "impl.py:attention", "--algorithm", "layer_norm", "--identify",
                             "-o", "norm=rms", "-o", "eps=0"), 2, setup=_write("impl.py", ATTENTION_TARGET),
      contains=("fixed by -o",)),
    C("identify-wrong-output", ("conform", "impl.py:attention", "--algorithm", "attention", "--identify",
                                "-o", "score=dot", "-o", "empty=zero", "--budget", "3", "--examples", "1",
                                "--json"), 1, setup=_write("impl.py", WRONG_TARGET), stderr="report",
      note="no variant conforms: exit 1, the search (JSON, one object) on stdout, no progress under --json"),

    # ---------------------------------------------------------------- gat: its options
    C("gat-version-3", ("show", "gat", "-o", "version=3"), 2, contains=("version",)),
    C("gat-version-word", ("show", "gat", "-o", "version=two"), 2, contains=("version",)),
    C("gat-version-bool", ("show", "gat", "-o", "version=true"), 2, contains=("version",)),
    C("gat-heads-sum", ("show", "gat", "-o", "heads=sum"), 2, contains=("heads",)),
    C("gat-slope-1", ("show", "gat", "-o", "slope=1"), 2, contains=("slope",),
      note="max(x, s·x) is the leaky ReLU only for s < 1"),
    C("gat-slope-negative", ("show", "gat", "-o", "slope=-0.2"), 2, contains=("slope",)),
    C("gat-slope-nan", ("show", "gat", "-o", "slope=nan"), 2, contains=("slope",)),

    # ---------------------------------------------------------------- conform: hostile outputs, late printing
    C("conform-huge-view-output", ("conform", "impl.py:f", "--algorithm", "attention", "--examples", "1", "--json"),
      1, stderr="report",
      setup=_write("impl.py", "import numpy as np\ndef f(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):\n"
                              "    return np.broadcast_to(0.5, (10**6, 10**6))\n"),
      note="a 10¹²-entry view fails shape before it is copied: one FAIL, no MemoryError traceback"),
    C("conform-prints-at-exit", ("conform", "impl.py:f", "--algorithm", "attention", "--examples", "1", "--json"),
      1, stderr="report",
      setup=_write("impl.py", "import atexit, os\ndef f(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):\n"
                              "    atexit.register(lambda: os.write(1, b'{ late }\\n'))\n    return X * 0\n"),
      note="the worker's streams are captured for its whole life: an atexit handler's output stays in the "
           "report, and the JSON stays one object"),

    # ---------------------------------------------------------------- empty=uniform, align_bias, output
    C("show-attention-empty-unknown", ("show", "attention", "-o", "empty=mean"), 2, contains=("empty", "'mean'")),
    C("show-seq2seq-align-bias-without-attention", ("show", "seq2seq", "-o", "attention=none",
                                                    "-o", "align_bias=true"), 2, contains=("align_bias",)),
    C("show-seq2seq-align-bias-under-general", ("show", "seq2seq", "-o", "score=general", "-o", "encoder=forward",
                                            "-o", "align_bias=true"), 2, contains=("align_bias", "'general'")),
    C("show-seq2seq-output-under-luong", ("show", "seq2seq", "-o", "attention=luong",
                                          "-o", "output=state_context_embedding"), 2, contains=("output", "'luong'")),
    C("show-seq2seq-output-unknown", ("show", "seq2seq", "-o", "output=embedding"), 2,
      contains=("output", "'embedding'")),

    # ---------------------------------------------------------------- paged_attention (the kernel's contract)
    C("paged-kernel-kv-heads-0", ("show", "paged_attention", "-o", "n_kv_heads=0"), 2, contains=("n_kv_heads = 0",)),
    C("paged-kernel-scale-option", ("show", "paged_attention", "-o", "scale=2"), 2, contains=("'scale'",),
      note="the scale is fixed at 1/√d_attn (a kernel's other scale is the contract on rescaled queries)"),
    C("paged-kernel-no-projections", ("show", "paged_attention", "-o", "bias=false"), 2, contains=("'bias'",),
      note="the kernel takes projected queries: no projection, so no bias option"),

    # ---------------------------------------------------------------- conform --size, sizes = {…} in a claim
    C("conform-size-unknown-name", ("conform", "impl.py:attention", "--algorithm", "attention", "--size", "H=4"), 2,
      setup=_write("impl.py", ATTENTION_TARGET), contains=("no size 'H'", "its sizes: d_attn")),
    C("conform-size-cycle", ("conform", "impl.py:attention", "--algorithm", "attention", "--size", "d_x=d_z",
                             "--size", "d_z=d_x"), 2, setup=_write("impl.py", ATTENTION_TARGET), contains=("cycle",)),
    C("conform-size-code", ("conform", "impl.py:attention", "--algorithm", "attention", "--size",
                            "d_x=__import__('os').system('touch pwned')"), 2,
      setup=_write("impl.py", ATTENTION_TARGET), contains=("--size d_x=",),
      note="the formula grammar parses; nothing is run, and no file appears"),
    C("conform-size-contradicts", ("conform", "impl.py:attention", "--algorithm", "dtransformer", "--size",
                                   "ell_max=ell-1"), 2, setup=_write("impl.py", ATTENTION_TARGET),
      contains=("contradicts", "ℓ ≤ ℓ_max")),
    C("check-implementation-size-past-max", ("check", "c.toml"), 2, stderr="line+report",
      contains=("d_x ≥ 101",), setup=lambda cwd: (_write("impl.py", ATTENTION_TARGET)(cwd), _write(
          "c.toml", '[[claim]]\nid = "c"\nalgorithm = "attention"\nimplementation = "impl.py:attention"\n'
                    'sizes = { d_attn = "d_x - 100" }\n')(cwd))),
    # every scheme --scheduler accepts is one Dask can use here; a list names each once; a flag with no effect
    C("verify-scheduler-http", ("verify", "--scheduler", "http://h:1"), 2, contains=("'http://h:1'", "tcp://")),
    C("verify-scheduler-ucx", ("verify", "--scheduler", "ucx://h:1"), 2, contains=("UCX-Py",)),
    C("prove-mutants-scheduler-http", ("prove", "--mutants", "--scheduler", "http://h:1"), 2,
      contains=("'http://h:1'",)),
    C("check-scheduler-ucx", ("check", "c.toml", "--scheduler", "ucx://h:1"), 2, setup=_write("c.toml", CLAIM),
      contains=("ucx://",)),
    C("verify-mutants-device-cuda", ("verify", "--mutants", "--device", "cuda"), 2,
      contains=("--device cuda", "--mutants")),
    C("verify-max-memory-0", ("verify", "--max-memory", "0"), 2, contains=("--max-memory",)),
    C("verify-mutants-max-memory", ("verify", "--mutants", "--max-memory", "8G"), 2, contains=("--max-memory",)),
    C("verify-only-twice", ("verify", "--only", "attention,attention"), 2, contains=("'attention' twice",)),
    C("prove-mutants-only-twice", ("prove", "--mutants", "--only", "div-sqrt-by-d,div-sqrt-by-d"), 2,
      contains=("'div-sqrt-by-d' twice",)),
    C("prove-names-twice", ("prove", "kaplan-n", "kaplan-n"), 2, contains=("'kaplan-n' twice",)),
    C("check-only-twice", ("check", "c.toml", "--only", "gpt2,gpt2"), 2, setup=_write("c.toml", CLAIM),
      contains=("'gpt2' twice",)),
    C("complexity-seq-len-twice", ("complexity", "gpt2", "--seq-len", "10", "--seq-len", "12"), 2,
      contains=("given twice",)),
    C("identify-all-nan", ("conform", "impl.py:attention", "--algorithm", "attention", "--identify", "--budget", "3",
                           "--examples", "1", "--json"), 1, setup=_write("impl.py", NAN_TARGET), stderr="report",
      note="the nearest variants fail finite at deviation Infinity (strict JSON: the string), never 0"),
    # sizes that grow: estimated in exact integers and refused before any array is drawn (formal.sampling.memory)
    C("conform-size-tie-past-numpy", ("conform", "impl.py:attention", "--algorithm", "attention", "--size",
                                      "d_attn=d_x**64"), 2, setup=_write("impl.py", ATTENTION_TARGET),
      contains=("d_attn set by --size d_attn = d_x**64", "more than the memory limit of 4 GiB"),
      note="a width of 2⁶⁴ or more: estimated in Python ints and refused before any array is drawn (numpy raised "
           "'Maximum allowed dimension exceeded', an internal error)"),
    C("conform-n-kv-heads-million", ("conform", "impl.py:attention", "--algorithm", "mhattention", "-o",
                                     "n_kv_heads=1000000"), 2, setup=_write("impl.py", ATTENTION_TARGET),
      contains=("mhattention with n_kv_heads=1000000", "to meet 1000000 divides H", "more than the memory limit"),
      note="the option raises H to a multiple of it: refused by the examples' estimate, not out of memory"),
    C("verify-variants-n-kv-heads-million", ("verify", "--variants", "n_kv_heads=1000000", "--only", "mhattention",
                                             "--quiet", "--device", "cpu"), 2,
      contains=("n_kv_heads=1000000", "more than the memory limit"),
      note="each variant's examples are estimated where they are drawn (formal.sampling.memory), in the task's "
           "worker process; the refusal comes back to the parent whole"),
    C("check-implementation-size-grows", ("check", "c.toml"), 2, stderr="line+report",
      contains=("d_attn set by --size d_attn = d_x**8", "more than the memory limit"),
      setup=lambda cwd: (_write("impl.py", ATTENTION_TARGET)(cwd), _write(
          "c.toml", '[[claim]]\nid = "c"\nalgorithm = "attention"\nimplementation = "impl.py:attention"\n'
                    'sizes = { d_attn = "d_x**8" }\n')(cwd))),
]


# ------------------------------------------------------------------------------------------ running
def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def _environment(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "MPL", "FORMAL_TRANSFORMERS", "PYTHONSTARTUP"))}
    env.pop("PYTHONIOENCODING", None)
    env.update(HOME=str(home), LC_ALL="C.UTF-8")
    return env


def _tree(root: Path) -> dict:
    """Every path under ``root`` (relative) → its kind and, for a regular file, size and mtime."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            st = os.lstat(path)
            kind = stat.S_IFMT(st.st_mode)
            found[str(path.relative_to(root))] = (kind, st.st_size if stat.S_ISREG(st.st_mode) else 0,
                                                  st.st_mtime_ns if stat.S_ISREG(st.st_mode) else 0)
    return found


@dataclass
class Result:
    status: int | None
    stdout: str
    stderr: str
    seconds: float
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    home_before: dict = field(default_factory=dict)
    home_after: dict = field(default_factory=dict)
    timed_out: bool = False
    raw_stdout: bytes = b""


def run_case(case: Case, base: Path) -> Result:
    cwd, home = base / "work", base / "home"
    cwd.mkdir(parents=True)
    home.mkdir()
    if case.setup is not None:
        case.setup(cwd)
    before, home_before = _tree(cwd), _tree(home)
    argv = [sys.executable, "-m", "formal", *case.argv]
    start = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, env=_environment(home), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limits,
                               start_new_session=True)
    timed_out = False
    try:
        out, err = process.communicate(timeout=case.limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
    seconds = time.monotonic() - start
    return Result(None if timed_out else process.returncode, out.decode("utf-8", "backslashreplace"),
                  err.decode("utf-8", "backslashreplace"), seconds, before, _tree(cwd), home_before,
                  _tree(home), timed_out, out)


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    """The results of every selected case, run 2 at a time."""
    wanted = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if spec is not None and item.module.__name__ == __name__ and "case" in spec.params:
            wanted.append(spec.params["case"])
    by_id = {}
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        # the slow (torch) cases first, so that the pool stays busy to the end
        ordered = sorted(wanted, key=lambda c: not c.torch)
        futures = {pool.submit(run_case, c, tmp_path_factory.mktemp(c.id.replace("*", "x"))): c for c in ordered}
        for future, c in futures.items():
            by_id[c.id] = future.result()
    return by_id


def _refuse_constant(name):
    """Strict JSON: NaN, Infinity and -Infinity are not JSON (Python's parser accepts them; others do not)."""
    raise ValueError(f"{name} is not JSON")


def _is_json(case: Case) -> bool:
    return "--json" in case.argv and case.argv[0] != "verify"  # verify's --json names a file


def _first_of_each_command(case: Case) -> bool:
    """Whether ``case`` is the catalogue's first of its command: the fast tier runs those (tests/tiers.py)."""
    return case is next(c for c in CASES if c.argv[:1] == case.argv[:1])


@pytest.mark.parametrize("case", fast_few(CASES, keep=_first_of_each_command), ids=[c.id for c in CASES])
def test_bad_input(case, results):
    r = results[case.id]
    shown = (f"exit {r.status}, {r.seconds:.1f} s\n--- stderr (tail)\n{r.stderr[-1500:]}\n"
             f"--- stdout (head)\n{r.stdout[:600]}")
    assert not r.timed_out, f"hung: no answer within the hang limit of {case.limit} s\n{shown}"
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, shown
    assert r.status == case.status, shown
    lines = r.stderr.splitlines()
    if case.status == 0:
        assert r.stderr == "", shown
        for text in case.contains:
            assert text in r.stdout, shown
    elif case.stderr in ("line", "line+report"):
        assert len(lines) == 1 and lines[0].strip(), f"not one line on stderr\n{shown}"
        assert lines[0].startswith(PREFIX), shown
        assert len(lines[0]) <= MAX_LINE, f"an error line of {len(lines[0])} characters\n{shown[:2000]}"
        for text in case.contains:
            assert text in lines[0], shown
    else:  # "report": conform's exit 1 with the failing property on stdout
        assert r.stdout.strip(), shown
    if _is_json(case):
        if r.stdout.strip():
            try:  # JSON text is UTF-8 (RFC 8259): a byte that is not is not JSON
                value = json.loads(r.raw_stdout.decode("utf-8"), parse_constant=_refuse_constant)
            except ValueError as exc:
                pytest.fail(f"--json printed something that is not one JSON object ({exc})\n{shown}")
            assert isinstance(value, dict), shown
    else:
        if case.status != 0 and case.stderr == "line":
            assert r.stdout == "", f"bad input printed on stdout\n{shown}"
        if case.stderr == "line+report":
            assert r.stdout.strip(), f"no report on stdout\n{shown}"
    allowed = set(case.files)
    created = set(r.after) - set(r.before) - allowed
    removed = set(r.before) - set(r.after)
    changed = {p for p in set(r.before) & set(r.after) if r.before[p] != r.after[p]}
    assert not created and not removed and not changed, \
        f"working directory: created {sorted(created)}, removed {sorted(removed)}, changed {sorted(changed)}\n{shown}"
    assert r.home_after == r.home_before, \
        f"HOME changed: {sorted(set(r.home_after) ^ set(r.home_before))}\n{shown}"


def test_the_catalogue_is_large_and_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 70
    # conform and verify cases take up to 20 s each on a loaded machine (importing torch under the limit, two at a
    # time; 0.1–4.6 s each measured alone): a budget keeps this file near two minutes (58 such cases: the whole
    # file 131 s on 2 shared cores)
    assert sum(c.torch for c in CASES) <= 60


def test_the_limits_leave_room_for_torch(tmp_path):
    """The address-space limit every case runs under lets torch import and compute, and `verify --help` run:
    a case that fails does so on its input, not on the harness's limit."""
    env = _environment(tmp_path)
    for argv in (["-m", "formal", "verify", "--help"], ["-c", "import torch; print(float(torch.ones(3).sum()))"]):
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
                              preexec_fn=_limits, timeout=HANG_LIMIT)
        assert done.returncode == 0, done.stderr[-2000:]
