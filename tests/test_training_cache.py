"""The numerals training (mha.course.training.train) through the run cache: a loaded run is
the run a fresh one gives (weights, gradients, history, global random state afterwards); a
run is cached only when asked (train_numeral_model asks: it builds its own model), and a run
that must be seen happening (a callback, a progress bar) is never loaded.

The reference is a fresh run with ``cache=False``. Each test has its own empty cache folder.
"""
from __future__ import annotations

import pytest
import torch

from mha.course import training
from mha.course.training import build_model, train

NUMBERS = list(range(1, 300))
SMALL = dict(num_heads=2, d_model=16, num_layers=1, d_ff=32)
RUN = dict(steps=12, batch_size=8, warmup=3, eval_numbers=[5, 50, 500], eval_every=6)


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MHA_COURSE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def stored_runs(folder):
    return sorted(folder.glob("numerals-*.pt")) if folder.exists() else []


def run(cache, dropout=0.1, **overrides):
    """Build (seeded) and train; return the model, history and generator state after."""
    model = build_model(**SMALL, dropout=dropout)
    history = train(model, NUMBERS, cache=cache, **{**RUN, **overrides})
    return model, history, torch.get_rng_state()


def assert_same_run(a, b, same_seconds=True):
    (model_a, history_a, rng_a), (model_b, history_b, rng_b) = a, b
    for (name, p), (_, q) in zip(model_a.named_parameters(), model_b.named_parameters()):
        assert torch.equal(p, q), name
        assert (p.grad is None) == (q.grad is None) and (p.grad is None or torch.equal(p.grad, q.grad)), name
    assert history_a.loss == history_b.loss
    assert history_a.eval_step == history_b.eval_step
    assert history_a.token_accuracy == history_b.token_accuracy
    assert history_a.exact_match == history_b.exact_match
    assert not same_seconds or history_a.seconds == history_b.seconds
    assert torch.equal(rng_a, rng_b)  # later cells draw the same numbers
    assert not model_a.training and not model_b.training


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_a_loaded_run_is_the_fresh_run(own_cache, monkeypatch, dropout):
    fresh = run(cache=False, dropout=dropout)
    assert stored_runs(own_cache) == []
    first = run(cache=True, dropout=dropout)  # computed and stored
    assert len(stored_runs(own_cache)) == 1
    assert_same_run(fresh, first, same_seconds=False)

    def no_training(*args, **kwargs):
        raise AssertionError("a stored run was computed again")

    monkeypatch.setattr(training, "sequence_loss", no_training)
    loaded = run(cache=True, dropout=dropout)
    assert_same_run(first, loaded)  # its own seconds included
    assert_same_run(fresh, loaded, same_seconds=False)


def test_a_dropout_run_depends_on_the_global_generator(own_cache):
    run(cache=True)

    def shifted(cache):
        model = build_model(**SMALL, dropout=0.1)
        torch.rand(1)  # the run starts from another state of the global generator
        return model, train(model, NUMBERS, cache=cache, **RUN), torch.get_rng_state()

    stored = shifted(cache=True)
    assert len(stored_runs(own_cache)) == 2  # not answered by the first run
    assert_same_run(shifted(cache=False), stored, same_seconds=False)


def test_other_settings_or_data_are_other_runs(own_cache):
    run(cache=True)
    run(cache=True, steps=13)
    run(cache=True, seed=1)
    model = build_model(**SMALL, dropout=0.1)
    train(model, NUMBERS[:-1], cache=True, **RUN)
    assert len(stored_runs(own_cache)) == 4


def test_train_caches_only_when_asked(own_cache):
    """Chapter 7 trains a model whose decoder inputs a hook perturbs, with the very settings of
    a clean run: a hook is not in the key, so train's default must compute."""
    _, clean, _ = run(cache=True, dropout=0.0)
    model = build_model(**SMALL)
    handle = model.tgt_embed.register_forward_pre_hook(lambda module, args: (args[0].flip(0),))
    noisy = train(model, NUMBERS, **RUN)
    handle.remove()
    assert len(stored_runs(own_cache)) == 1
    assert noisy.loss != clean.loss


def test_the_numerals_model_is_cached_and_loaded(own_cache):
    kwargs = dict(**SMALL, steps=12, warmup=3)
    fresh = training.train_numeral_model(**kwargs, cache=False)
    first = training.train_numeral_model(**kwargs)
    again = training.train_numeral_model(**kwargs)
    assert len(stored_runs(own_cache)) == 1
    for (model, history) in (first, again):
        assert history.loss == fresh[1].loss
        for p, q in zip(model.parameters(), fresh[0].parameters()):
            assert torch.equal(p, q)


def test_callbacks_and_progress_are_not_cached(own_cache):
    steps = []
    run(cache=True, on_step=lambda step, model: steps.append(step))
    assert steps == list(range(1, RUN["steps"] + 1))
    run(cache=True, progress=True)
    assert len(stored_runs(own_cache)) == 0
