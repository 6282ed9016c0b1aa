"""The reference tests need torch, and share the spec's strategies (tests/formal: cases, stack_cases) —
the configurations drawn there drive both implementations."""

import os
import sys

import pytest

pytest.importorskip("torch")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "formal"))

# Implementations for `conform` to check (some with planted bugs): run by the tests, not collected.
collect_ignore = ["implementations"]
