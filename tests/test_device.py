"""The course's device rule (mha.course.device.pick_device) and precision options.

The rule: an explicit ``device`` argument, else ``$MHA_DEVICE``, else cuda, then mps, then
cpu; a device that is named but absent is an error, never a silent fall-back. No GPU is
needed: the availability of CUDA and MPS is faked with monkeypatch.
"""
import pytest
import torch

from mha.course.device import MixedPrecision, available_devices, pick_device


@pytest.fixture
def machine(monkeypatch):
    """``machine(cuda=0, mps=False)`` fakes what this PyTorch sees; MHA_DEVICE is unset."""
    monkeypatch.delenv("MHA_DEVICE", raising=False)

    def fake(cuda: int = 0, mps: bool = False):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    fake()
    return fake


@pytest.mark.parametrize("cuda, mps, expected", [
    (0, False, "cpu"), (0, True, "mps"), (1, False, "cuda"), (2, True, "cuda"),
])
def test_without_a_choice_the_fastest_present_device_wins(machine, cuda, mps, expected):
    machine(cuda=cuda, mps=mps)
    assert pick_device() == torch.device(expected)
    assert available_devices()[0] == expected and available_devices()[-1] == "cpu"


def test_mha_device_overrides_the_automatic_choice(machine, monkeypatch):
    machine(cuda=1, mps=True)
    monkeypatch.setenv("MHA_DEVICE", "cpu")
    assert pick_device() == torch.device("cpu")
    monkeypatch.setenv("MHA_DEVICE", "mps")
    assert pick_device() == torch.device("mps")
    monkeypatch.setenv("MHA_DEVICE", " auto ")  # explicit "the rule, please"
    assert pick_device() == torch.device("cuda")
    monkeypatch.setenv("MHA_DEVICE", "")  # set but empty = unset
    assert pick_device() == torch.device("cuda")


def test_an_explicit_argument_overrides_mha_device(machine, monkeypatch):
    machine(cuda=2)
    monkeypatch.setenv("MHA_DEVICE", "cuda")
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(torch.device("cuda", 1)) == torch.device("cuda:1")


def test_asking_for_absent_cuda_is_an_error_that_names_the_setting(machine, monkeypatch):
    monkeypatch.setenv("MHA_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match=r"MHA_DEVICE='cuda' but no CUDA device is visible"):
        pick_device()
    with pytest.raises(RuntimeError, match=r"device='cuda' but no CUDA device is visible"):
        pick_device("cuda")


def test_asking_for_absent_mps_or_a_missing_gpu_index_is_an_error(machine, monkeypatch):
    with pytest.raises(RuntimeError, match=r"device='mps' but no Apple GPU \(MPS\) is available"):
        pick_device("mps")
    machine(cuda=2)
    monkeypatch.setenv("MHA_DEVICE", "cuda:2")
    with pytest.raises(RuntimeError, match=r"only 2 CUDA device\(s\) are visible: use cuda:0 .. cuda:1"):
        pick_device()


@pytest.mark.parametrize("name", ["gpu", "GPU0", "xla", "meta", "cuda:x"])
def test_a_name_that_is_not_a_device_lists_the_valid_ones(machine, monkeypatch, name):
    monkeypatch.setenv("MHA_DEVICE", name)
    with pytest.raises(ValueError, match=r"is not a device this course knows: use one of 'cpu', 'cuda'"):
        pick_device()


def test_precision_names_and_where_they_run():
    cpu = torch.device("cpu")
    assert MixedPrecision(cpu, "fp32").scaler is None
    assert MixedPrecision(cpu, "bf16").dtype is torch.bfloat16
    with pytest.raises(ValueError, match=r"precision='fp8': use one of 'fp32', 'bf16', 'fp16'"):
        MixedPrecision(cpu, "fp8")
    with pytest.raises(ValueError, match=r"precision='fp16' needs a CUDA device .* on the CPU use precision='bf16'"):
        MixedPrecision(cpu, "fp16")
    with pytest.raises(ValueError, match=r"precision='bf16' runs on cpu or cuda, not mps"):
        MixedPrecision(torch.device("mps"), "bf16")


def test_fp32_is_plain_float32_and_bf16_autocasts_the_matrix_products():
    x, w = torch.randn(3, 4), torch.randn(4, 5)
    with MixedPrecision(torch.device("cpu"), "fp32").autocast():
        assert (x @ w).dtype is torch.float32
    with MixedPrecision(torch.device("cpu"), "bf16").autocast():
        assert (x @ w).dtype is torch.bfloat16
        # the loss is computed in float32 on every device (autocast's float32 list)
        loss = torch.nn.functional.cross_entropy(x @ w, torch.tensor([0, 1, 2]))
        assert loss.dtype is torch.float32


def test_the_training_loops_refuse_a_bad_precision_before_training(machine):
    from mha.course.corpus import train_lm
    from mha.course.training import build_model, train
    from mha.gpt import GPT, GPTConfig

    lm = GPT(GPTConfig(16, 8, 8, 2, 1, 16))
    before = [p.clone() for p in lm.parameters()]
    with pytest.raises(ValueError, match="needs a CUDA device"):
        train_lm(lm, torch.arange(100) % 16, steps=2, batch_size=2, length=4,
                 progress=False, precision="fp16")
    assert all(torch.equal(a, b) for a, b in zip(before, lm.parameters()))
    with pytest.raises(RuntimeError, match="no CUDA device is visible"):
        train(build_model(d_model=8, d_ff=8, num_layers=1), [1, 2, 3], steps=1, device="cuda")
