"""``mha.course.train`` under torchrun with more processes than GPUs stops before any work.

Issue 33: ``torchrun --nproc_per_node 2 -m mha.course.train`` on a one-GPU machine died in
``torch.cuda.set_device`` with "CUDA error: invalid device ordinal" and a page of traceback.
These tests need no GPU: the check is a function of counts, and main() is run with the CUDA
calls replaced.
"""
import pytest
import torch

from mha.course import train


def test_as_many_gpus_as_processes_is_enough():
    train.check_one_gpu_each(processes=2, visible=2)
    train.check_one_gpu_each(processes=1, visible=8)


@pytest.mark.parametrize("processes, visible", [(2, 1), (4, 2), (2, 0)])
def test_more_processes_than_gpus_stops_with_one_line_naming_the_fix(processes, visible):
    with pytest.raises(SystemExit) as stop:
        train.check_one_gpu_each(processes, visible)
    message = str(stop.value)
    assert "\n" not in message
    assert f"{processes} processes" in message and f"{visible} visible" in message
    assert f"--nproc_per_node {visible}" in message or visible == 0
    assert "--device cpu" in message and "gloo" in message


def two_processes_on_one_gpu(monkeypatch, rank: int) -> None:
    """Process ``rank`` of ``torchrun --nproc_per_node 2`` on a machine whose only GPU is cuda:0."""
    for name, value in {"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": str(rank),
                        "LOCAL_WORLD_SIZE": "2"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(train, "pick_device", lambda device=None: torch.device("cuda"))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)


def test_main_stops_before_touching_a_gpu_that_is_not_there(monkeypatch):
    two_processes_on_one_gpu(monkeypatch, rank=1)

    def no_work(*args, **kwargs):
        raise AssertionError("reached CUDA or the process group before the check")
    monkeypatch.setattr(torch.cuda, "set_device", no_work)
    monkeypatch.setattr(train.dist, "init_process_group", no_work)
    with pytest.raises(SystemExit, match="--device cpu"):
        train.main(["--steps", "1"])


def test_every_process_of_the_machine_stops_not_only_the_one_without_a_gpu(monkeypatch):
    """Rank 0 has cuda:0, but its partner will fail: it must not start and wait for it."""
    two_processes_on_one_gpu(monkeypatch, rank=0)
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: None)
    monkeypatch.setattr(train.dist, "init_process_group", lambda *a, **k: 1 / 0)
    with pytest.raises(SystemExit, match="2 processes"):
        train.main(["--steps", "1"])
