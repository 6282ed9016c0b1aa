"""Derived costs against what torch counts: the ``matmul`` convention's FLOPs equal
``torch.utils.flop_counter.FlopCounterMode`` on the reference's explicit attention path exactly, and the
derived parameter count equals the sum of ``numel`` of the tensors the reference is given."""

import pytest
from torch.utils.flop_counter import FlopCounterMode

from formal.sampling.examples import examples
from reference.model.convert import params_to_torch
from reference.model.execute import execute
from tests.strategies.cases import evaluate
from tests.tiers import fast_few, in_fast_tier

COUNTED = ["single_query_attention", "attention", "mhattention", "kv_mhattention", "unembedding", "layer_norm",
           "token_embedding", "positional_embedding", "dtransformer", "etransformer", "edtransformer",
           "kv_dtransformer", "dloss", "eloss", "edloss", "window_mhattention", "swin_block", "patch_merging",
           "swin_stage", "swin"]


@pytest.mark.parametrize("name", fast_few(COUNTED, keep=in_fast_tier))
def test_matmul_flops_equal_flop_counter_mode(name):
    """FLOPs under ``matmul`` (2 per multiply-add of every matrix product, full score matrices) = the
    FLOPs FlopCounterMode sees the explicit path perform, on seeded examples of every variant."""
    for ex in examples(name, 10, seed=7):
        with FlopCounterMode(display=False) as counter:
            execute(ex.algorithm, device="cpu", **ex.arguments)
        derived = evaluate(ex.algorithm.cost("matmul").flops, ex.sizes)
        assert counter.get_total_flops() == derived, ex.describe()


@pytest.mark.parametrize("name", fast_few(COUNTED + ["dinference", "edinference"], keep=in_fast_tier))
def test_parameter_count_equals_numel(name):
    """The derived parameter count = Σ numel over the reference's parameter tensors."""
    for ex in examples(name, 10, seed=11):
        tensors = params_to_torch({p: ex.arguments[p] for p in ex.params}, device="cpu")
        assert sum(t.numel() for t in tensors.values()) == evaluate(ex.algorithm.param_count(), ex.sizes)
