"""The run cache (mha.course.run_cache): a run is computed once per machine, loaded after.

Each test points $MHA_COURSE_CACHE at its own empty folder.
"""
from __future__ import annotations

import multiprocessing
import time

import pytest
import torch

from mha.course import induction, run_cache
from mha.course.corpus import train_lm
from mha.gpt import GPT, GPTConfig


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MHA_COURSE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def counting(result):
    calls = []

    def compute():
        calls.append(1)
        return result

    return compute, calls


def test_a_second_call_loads_instead_of_computing():
    compute, calls = counting({"w": torch.arange(6.0).reshape(2, 3), "seconds": 1.5, "losses": [3.0, 2.0]})
    first = run_cache.cached("toy", {"steps": 3}, compute)
    second = run_cache.cached("toy", {"steps": 3}, compute)
    assert len(calls) == 1
    assert torch.equal(second["w"], torch.arange(6.0).reshape(2, 3))
    assert second["seconds"] == first["seconds"] == 1.5 and second["losses"] == [3.0, 2.0]


def test_a_changed_key_or_name_or_refresh_computes_again():
    compute, calls = counting({"x": 1})
    run_cache.cached("toy", {"steps": 3, "data": torch.zeros(4)}, compute)
    run_cache.cached("toy", {"steps": 4, "data": torch.zeros(4)}, compute)   # other setting
    run_cache.cached("toy", {"steps": 3, "data": torch.ones(4)}, compute)    # other data
    run_cache.cached("other", {"steps": 3, "data": torch.zeros(4)}, compute)  # other name
    assert len(calls) == 4
    run_cache.cached("toy", {"steps": 3, "data": torch.zeros(4)}, compute, refresh=True)
    assert len(calls) == 5


def test_threads_are_part_of_every_key():
    compute, calls = counting({"x": 1})
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        run_cache.cached("toy", {}, compute)
        torch.set_num_threads(2)
        run_cache.cached("toy", {}, compute)
    finally:
        torch.set_num_threads(threads)
    assert len(calls) == 2


def test_a_run_under_other_cpu_kernels_is_computed_not_loaded(monkeypatch):
    """Other vector kernels round sums differently (PyTorch picks AVX-512, AVX2 or plain code,
    or what ATEN_CPU_CAPABILITY asks for; MKL what MKL_ENABLE_INSTRUCTIONS allows), so a run
    computed under one kernel set must never answer for another."""
    compute, calls = counting({"x": 1})
    run_cache.cached("toy", {}, compute)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "NOT-THIS-MACHINES")
    run_cache.cached("toy", {}, compute)
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "SSE4_2")
    run_cache.cached("toy", {}, compute)
    assert len(calls) == 3


def test_a_key_with_an_object_that_has_no_stable_value_is_refused():
    with pytest.raises(TypeError, match="object"):
        run_cache.cached("toy", {"model": object()}, lambda: {})


def _slow_run(log_path: str, cache: str) -> None:
    import os

    os.environ["MHA_COURSE_CACHE"] = cache

    def compute():
        with open(log_path, "a") as log:
            log.write("computed\n")
        time.sleep(1.0)  # long enough for the other process to arrive while this one runs
        return {"value": torch.tensor([42])}

    result = run_cache.cached("slow", {"k": 1}, compute)
    assert result["value"].item() == 42


def test_two_processes_at_once_compute_once(tmp_path, own_cache):
    log = tmp_path / "log.txt"
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_slow_run, args=(str(log), str(own_cache))) for _ in range(2)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=120)
    assert [p.exitcode for p in processes] == [0, 0]
    assert log.read_text().count("computed") == 1
    assert not list(own_cache.glob("*.tmp"))  # written under another name, then renamed


def test_where_nothing_can_be_written_the_run_is_computed_and_not_kept(monkeypatch, tmp_path):
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")  # the cache folder would be inside a file: it cannot be made
    monkeypatch.setenv("MHA_COURSE_CACHE", str(not_a_folder / "cache"))
    compute, calls = counting({"x": 1})
    assert run_cache.cached("toy", {}, compute) == {"x": 1}
    assert run_cache.cached("toy", {}, compute) == {"x": 1}
    assert len(calls) == 2


TINY = dict(num_layers=1, steps=6, seed=3, d_model=16, num_heads=2, batch_size=4,
            seq_len=16, max_len=6, min_len=2, snapshot_steps=(2,))


def test_an_induction_run_loaded_from_the_cache_is_the_run(monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = induction.train(**TINY, cache=False)
        after_fresh = torch.rand(3)  # where a run leaves the generator
        runs = []
        real = induction._train
        monkeypatch.setattr(induction, "_train", lambda **kw: runs.append(1) or real(**kw))
        first = induction.train(**TINY)
        second = induction.train(**TINY)
        after_loaded = torch.rand(3)
    finally:
        torch.set_num_threads(threads)
    assert len(runs) == 1
    assert second.losses == first.losses == fresh.losses
    assert second.seconds == first.seconds and second.cpu_seconds == first.cpu_seconds > 0
    for a, b in zip(fresh.model.state_dict().values(), second.model.state_dict().values()):
        assert torch.equal(a, b)
    assert torch.equal(fresh.snapshots[2]["embed.weight"], second.snapshots[2]["embed.weight"])
    assert not second.model.training
    assert torch.equal(after_fresh, after_loaded)


def small_gpt(seed=0):
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=16, max_len=8, d_model=16, num_heads=2, num_layers=1, d_ff=32))


def test_train_lm_with_cache_trains_the_model_once_and_then_loads_its_weights(monkeypatch):
    ids = torch.arange(200) % 16
    settings = dict(steps=5, batch_size=4, length=6, lr=1e-2, seed=1, progress=False, device="cpu")
    fresh = small_gpt()
    fresh_history = train_lm(fresh, ids, **settings)

    from mha.course import corpus
    runs = []
    real = corpus.train_lm
    monkeypatch.setattr(corpus, "train_lm", lambda *a, **kw: runs.append(kw.get("cache")) or real(*a, **kw))
    first, second = small_gpt(), small_gpt()
    first_history = corpus.train_lm(first, ids, cache=True, **settings)
    second_history = corpus.train_lm(second, ids, cache=True, **settings)
    assert runs == [True, None, True]  # two asked, one trained (called without cache inside)
    assert second_history == first_history
    assert second_history["loss"] == fresh_history["loss"] and second_history["cpu_seconds"] > 0
    for a, b in zip(fresh.state_dict().values(), second.state_dict().values()):
        assert torch.equal(a, b)
    assert not second.training

    other = small_gpt(seed=5)  # other initial weights: another run
    corpus.train_lm(other, ids, cache=True, **settings)
    assert runs.count(None) == 2
