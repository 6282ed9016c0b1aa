"""Algorithms 11–13 on the reference: the gradient step ``θ ← θ − η∇loss`` with the gradient checked
against central finite differences of the *spec's* numpy loss; the training loop, minibatches and AdamW
against independent statements of what they do."""

import numpy as np
import pytest
import torch

from formal.sampling.examples import example
from reference.model import training
from reference.model.convert import params_to_torch, tokens_to_torch
from reference.verification.verify import example_loss
from tests.tiers import slow

H_FD = 1e-6


def _finite_difference(ex, name, index):
    """∂ loss / ∂ θ[name][index] of the spec's numpy loss, by central differences."""
    values = []
    for sign in (1, -1):
        arguments = dict(ex.arguments)
        arguments[name] = np.array(arguments[name], dtype=np.float64)
        arguments[name][index] += sign * H_FD
        values.append(float(ex.algorithm(**arguments)))
    return (values[0] - values[1]) / (2 * H_FD)


@slow
@pytest.mark.parametrize("name", ["dloss", "edloss", "eloss"])
def test_sgd_step_follows_finite_differences_of_the_spec_loss(name):
    """Algorithms 11–13, the update line: the reference's step is θ − η·g where g agrees with central
    differences of the spec's loss, entry by entry (every entry of 3 tiny random configurations, sizes ≤ 3)."""
    eta = 0.1
    for ex in [example(name, seed, small=2) for seed in (3, 4, 5)]:
        theta = params_to_torch({p: ex.arguments[p] for p in ex.params}, device="cpu")
        stepped = training.sgd_step(theta, example_loss(ex), eta)
        for p in ex.params:
            for index in np.ndindex(np.shape(ex.arguments[p])):
                g = _finite_difference(ex, p, index)
                moved = (theta[p][index] - stepped[p][index]).item() / eta
                assert abs(moved - g) <= 1e-6 * max(1.0, abs(g)), (ex.describe(), p, index, moved, g)


def _decoder_setup(seed, n_sequences):
    """A dloss example's parameters, ``n_sequences`` random sequences of its length, and its loss of
    (params, batch) → per-sequence losses."""
    ex = example("dloss", seed)
    o, ell_max = ex.algorithm.options, ex.arguments.get("ell_max")
    rng = np.random.default_rng(seed)
    data = tokens_to_torch(rng.integers(0, ex.sizes["N_V"], size=(n_sequences, ex.sizes["ell"])), device="cpu")[0]
    theta = params_to_torch({p: ex.arguments[p] for p in ex.params}, device="cpu")

    def loss(p, x):
        return training.dloss(x, p, o, ell_max=ell_max)

    return theta, data, loss


def test_training_is_epochs_of_per_sequence_steps():
    """Algorithm 13: ``train`` (torch.optim.SGD, batch 1) = N_epochs passes of ``sgd_step`` over the data
    in order, written here as that loop."""
    theta, data, loss = _decoder_setup(5, 3)
    trained = training.train(theta, loss, (data,), eta=0.05, epochs=2)
    expected = theta
    for _ in range(2):
        for x in data:
            expected = training.sgd_step(expected, lambda p: loss(p, x[None]).sum(), 0.05)
    for p in theta:
        assert torch.allclose(trained[p], expected[p], atol=1e-12, rtol=0), p


def test_minibatch_step_follows_the_mean_gradient():
    """Minibatches (decision-training: a variant): one step over a batch moves θ by −η × the mean of the
    sequences' gradients, each taken alone with the paper's step."""
    theta, data, loss = _decoder_setup(6, 3)
    trained = training.train(theta, loss, (data,), eta=1.0, batch_size=3)
    singles = [training.sgd_step(theta, lambda p, x=x: loss(p, x[None]).sum(), 1.0) for x in data]
    for p in theta:
        mean_step = sum(theta[p] - s[p] for s in singles) / 3
        assert torch.allclose(theta[p] - trained[p], mean_step, atol=1e-12, rtol=0), p


def test_adamw_first_step_is_a_normalised_step_with_decoupled_decay():
    """AdamW (Loshchilov & Hutter 2019, Algorithm 2), first step: the bias-corrected moments are m̂ = g and
    v̂ = g², so each entry moves by −η·g/(|g| + ε) (ε = 1e-8, torch's default), after the decoupled decay
    θ ← θ(1 − ηλ)."""
    theta, data, loss = _decoder_setup(8, 1)
    grads = training.sgd_step(theta, lambda p: loss(p, data).sum(), 1.0)
    eta, decay, adam_eps = 1e-3, 0.1, 1e-8
    trained = training.train(theta, loss, (data,), eta=eta, optimizer="adamw", weight_decay=decay)
    for p in theta:
        g = theta[p] - grads[p]
        expected = theta[p] * (1 - eta * decay) - eta * g / (g.abs() + adam_eps)
        assert torch.allclose(trained[p], expected, atol=1e-12, rtol=0), p


@pytest.mark.parametrize("kwargs, message", [
    ({"optimizer": "adam"}, "unknown optimizer 'adam'"),
    ({"batch_size": 0}, "batch_size = 0"),
    ({"eta": -1.0}, "eta = -1.0"),
])
def test_bad_training_arguments_are_config_errors(kwargs, message):
    from formal.errors import ConfigError
    ex = example("dloss", 1)
    theta = params_to_torch({p: ex.arguments[p] for p in ex.params}, device="cpu")
    with pytest.raises(ConfigError, match=message):
        training.train(theta, lambda p, x: x.sum(), (torch.zeros(2, 2),), **{"eta": 0.1, **kwargs})
