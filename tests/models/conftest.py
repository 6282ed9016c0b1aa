"""The presets' checks against HF transformers need torch and transformers: without them they are skipped,
never failed.  HF's models are built from configurations, never downloaded."""

import os

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
