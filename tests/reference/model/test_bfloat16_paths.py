"""The reference's bfloat16 convolution on every small configuration, one thread, as verify's workers run it.

torch 2.13's CPU kernel for a bfloat16 ``conv1d`` that pads by itself ends the process (SIGSEGV) on CPUs with
AMX when every output position reads only padding — a kernel of one tap, a stride past the input (ℓ = 1,
k = 1, stride 2, padding 1, dilation 2) — whatever the layout of the operands; the reference pads before an
unpadded convolution.  The sweep runs in a subprocess, so that a crash fails the test instead of ending the
test run.
"""

import subprocess
import sys

from tests.tiers import slow

_SWEEP = """
import itertools
import numpy as np, torch
torch.set_num_threads(1)
from formal.algorithms.convolution import conv1d
from formal.errors import FormalError
from reference.model.execute import execute
rng = np.random.default_rng(0)
checked = 0
for ell, k, stride, dilation, padding, d_in in itertools.product(
        (1, 2, 3, 5), (1, 2, 3), (1, 2, 3), (1, 2, 3), (0, 1, 2, "same"), (1, 2)):
    try:
        algorithm = conv1d.variant(stride=stride, padding=padding, dilation=dilation)
        args = dict(X=rng.normal(size=(d_in, ell)), W=rng.normal(size=(k, 2, d_in)), b=rng.normal(size=2))
        want = algorithm(**args)
    except FormalError:   # a configuration the spec does not define (no output position)
        continue
    print(ell, k, stride, dilation, padding, d_in, flush=True)
    got = execute(algorithm, dtype="bfloat16", device="cpu", **args)
    assert got.shape == want.shape and np.abs(got - want).max() <= 0.1 * max(1, np.abs(want).max()), (got, want)
    checked += 1
print("ok", checked)
"""


@slow
def test_conv1d_in_bfloat16_survives_every_small_configuration():
    """Every stride, dilation, padding and kernel up to 3 over sequences up to 5 tokens: the process survives
    and each output equals the spec's within a bfloat16 margin (on a CPU with AMX, torch padding by itself
    crashes on the configurations whose outputs read only padding)."""
    done = subprocess.run([sys.executable, "-c", _SWEEP], capture_output=True, text=True, timeout=600)
    last = done.stdout.strip().splitlines()[-1:] or [""]
    assert done.returncode == 0, f"exit {done.returncode} after configuration {last[0]!r}: {done.stderr[-2000:]}"
    assert last[0].startswith("ok ") and int(last[0].split()[1]) > 100, done.stdout[-500:]
