"""What an algorithm is, declared on its object: the role of each input (the tokens a property permutes or
perturbs, a context attended over), which mask hides which context (derived from the shapes), whether output
column t reads only one side of its tokens, and how the outputs answer a permutation — some depending on the
options they are built with."""

import pytest

from formal import algorithms
from formal.core.shapes import ROLES, TensorSpec
from formal.core.symbols import d_x, ell_x
from formal.engine.algorithm import Algorithm, Assign
from formal.errors import ConfigError
from formal.ops import Ref


def test_a_role_is_one_of_the_known_ones():
    assert TensorSpec("X", (d_x, ell_x), role="tokens").role in ROLES
    with pytest.raises(ConfigError, match="unknown role 'queries'"):
        TensorSpec("X", (d_x, ell_x), role="queries")


def _identity(**properties):
    return Algorithm(number=None, source="a test", name="identity", display="Identity", summary="X.",
                     inputs=[TensorSpec("X", (d_x, ell_x))], params=[],
                     output=TensorSpec("Y", (d_x, ell_x)), lines=[Assign("Y", Ref("X"), returns=True)], **properties)


@pytest.mark.parametrize("properties, message", [
    (dict(causal="forward"), "with an input of role 'tokens'"),
    (dict(permutation={"Z": "invariant"}), "must name an input"),
    (dict(permutation={"X": "sorted"}), "one of equivariant, invariant"),
])
def test_a_property_names_what_it_is_about(properties, message):
    with pytest.raises(ConfigError, match=message):
        _identity(**properties)


def test_algorithm_4_roles_and_the_mask_that_hides_its_context():
    """Algorithm 4: X the tokens, Z the context; Mask[t_z, t_x] runs over Z's columns, so it hides them."""
    a = algorithms.attention
    assert a.tokens.name == "X" and [s.name for s in a.with_role("context")] == ["Z"]
    assert a.hidden == {"mask": "Z"}
    assert a.permutation == {"X": "equivariant", "Z": "invariant"} and a.causal is None


def test_a_mask_over_a_cache_hides_no_single_input():
    """The cached attention's mask runs over the ℓ_c cached columns and the new ones: no input is that context."""
    assert algorithms.kv_mhattention.hidden == {}


@pytest.mark.parametrize("direction, causal", [("forward", "forward"), ("backward", "backward"),
                                               ("bidirectional", None)])
def test_a_recurrence_reads_the_side_its_direction_says(direction, causal):
    for name in ("rnn_layer", "rnn"):
        assert algorithms.get(name, direction=direction).causal == causal


def test_decoders_are_causal_and_encoders_equivariant_without_positions():
    assert algorithms.dtransformer.causal == algorithms.edtransformer.causal == algorithms.seq2seq.causal == "forward"
    assert algorithms.etransformer.permutation == {}
    assert algorithms.etransformer.variant(position="none").permutation == {"x": "equivariant"}
    assert algorithms.etransformer.variant(position="none", head="classifier").permutation == {}
    assert algorithms.edtransformer.variant(position="none").permutation == {"z": "invariant"}


def test_generation_returns_tokens():
    assert [o.role for o in algorithms.dinference.outputs] == [o.role for o in algorithms.edinference.outputs] \
        == ["tokens"]
    assert all(o.role == "" for o in algorithms.dtransformer.outputs)
