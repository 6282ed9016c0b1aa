"""The tests of the torch reference (:mod:`reference.model`) need torch: without it they are skipped, never
failed.  HF transformers' models are built from configurations, never downloaded."""

import os

import pytest

pytest.importorskip("torch")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
