"""``mha.course.train``: data-parallel training under torchrun equals one process on the
global batch.

The slow test launches ``python -m torch.distributed.run --nproc_per_node 2`` (torchrun) with
two CPU processes (gloo) on a free port, then checks that both processes end with the same
weights, bit for bit, and that they equal the weights of one process trained on the same
global batches up to float rounding: the two halves' gradients are summed in another order
than one process sums the whole batch (measured here: 3e-6 after 6 AdamW steps; tolerance
5e-5).
"""
import os
import socket
import subprocess
import sys

import pytest
import torch
from torch.utils.data import DistributedSampler

from mha import GPT, GPTConfig
from mha.course.corpus import train_lm
from mha.course.train import main, shard

from test_precision import markov_ids

TINY = ["--vocab-size", "32", "--d-model", "16", "--num-heads", "2", "--num-layers", "1",
        "--length", "12", "--batch-size", "8", "--steps", "6", "--lr", "1e-2", "--seed", "3"]


@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_each_process_takes_the_rows_distributed_sampler_would_give_it(world_size):
    batch = torch.arange(8)[:, None].expand(8, 3)  # row i holds i
    for rank in range(world_size):
        sampler = DistributedSampler(range(8), num_replicas=world_size, rank=rank, shuffle=False)
        assert shard(batch, rank, world_size)[:, 0].tolist() == list(sampler)


def test_a_global_batch_that_does_not_split_evenly_is_refused():
    with pytest.raises(ValueError, match="choose --batch-size a multiple of 3"):
        shard(torch.zeros(8, 5), 0, 3)


@pytest.fixture
def ids_file(tmp_path):
    path = tmp_path / "ids.pt"
    torch.save(markov_ids(0), path)
    return path


@pytest.mark.slow
def test_one_process_trains_exactly_like_train_lm(ids_file, tmp_path, monkeypatch):
    """Without torchrun the entry point is train_lm's loop: the same losses, bit for bit."""
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    main(TINY + ["--ids", str(ids_file), "--device", "cpu", "--out", str(tmp_path / "lm.pt")])
    saved = torch.load(tmp_path / "lm.pt", weights_only=True)
    torch.manual_seed(3)
    model = GPT(GPTConfig(32, 12, 16, 2, 1, 64))
    history = train_lm(model, markov_ids(0), steps=6, batch_size=8, length=12, lr=1e-2, seed=3,
                       progress=False, device="cpu")
    assert saved["losses"] == history["loss"]
    for name, value in model.state_dict().items():
        assert torch.equal(saved["state"][name], value), name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_cpu_processes_under_torchrun_match_one_process_on_the_global_batch(ids_file, tmp_path):
    env = {**os.environ, "MHA_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    common = TINY + ["--ids", str(ids_file)]
    one = tmp_path / "one" / "lm.pt"
    two = tmp_path / "two" / "lm.pt"
    subprocess.run([sys.executable, "-m", "mha.course.train", *common, "--out", str(one)],
                   env=env, check=True, timeout=600, capture_output=True)
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
         "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
         "-m", "mha.course.train", *common, "--out", str(two), "--save-every-rank"],
        env=env, timeout=600, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert '"world_size": 2, "backend": "gloo"' in run.stdout
    rank0 = torch.load(two.with_name("lm.pt.rank0"), weights_only=True)
    rank1 = torch.load(two.with_name("lm.pt.rank1"), weights_only=True)
    single = torch.load(one, weights_only=True)
    for name in single["state"]:
        assert torch.equal(rank0[name], rank1[name]), f"{name} differs between the processes"
        torch.testing.assert_close(rank0[name], single["state"][name], atol=5e-5, rtol=0)
    torch.testing.assert_close(torch.tensor(torch.load(two, weights_only=True)["losses"]),
                               torch.tensor(single["losses"]), atol=5e-5, rtol=0)
