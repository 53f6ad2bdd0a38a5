"""The model zoo gives the CPU's results on every device this machine has.

Each test builds a tiny seeded model on the CPU, runs it there (the reference) and on the
device under test (a copy moved with ``.to(device)``, inputs moved the same way), and
compares the outputs on the CPU within the device's tolerance :data:`TOL`.

The devices: ``cpu`` chosen through the course's rule with ``MHA_DEVICE=cpu`` (so the
plumbing, ``pick_device`` -> ``.to(device)`` -> compare, runs on every machine, and on the
CPU the results must be bit-for-bit equal), ``cuda`` and ``mps`` (skipped with the reason
when absent). ``make test`` hides GPUs (the Makefile sets ``CUDA_VISIBLE_DEVICES=``): on a
GPU machine run ``.venv/bin/pytest tests/test_devices.py`` directly.

Tolerances (float32): CUDA matrix products use other kernels and summation orders than the
CPU's (TF32 stays off for float32 matmuls by PyTorch's default), MPS more so; 1e-4 and 1e-3
are loose enough for those and far below any real bug (a wrong mask or position moves
outputs by ~1e-1).
"""
import copy

import pytest
import torch

import mha
from mha import GPT, GPTConfig, MultiHeadAttention, Transformer, causal_mask, padding_mask
from mha.course.device import mps_available, pick_device

TOL = {"cpu": dict(atol=0.0, rtol=0.0), "cuda": dict(atol=1e-4, rtol=1e-4),
       "mps": dict(atol=1e-3, rtol=1e-3)}


@pytest.fixture(params=["cpu", "cuda", "mps"], ids=["cpu-via-MHA_DEVICE", "cuda", "mps"])
def device(request, monkeypatch) -> torch.device:
    """The device under test, chosen by the course's rule through ``MHA_DEVICE``."""
    name = request.param
    if name == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device visible (make test hides GPUs with CUDA_VISIBLE_DEVICES=)")
    if name == "mps" and not mps_available():
        pytest.skip("no Apple GPU (MPS) on this machine")
    monkeypatch.setenv("MHA_DEVICE", name)
    picked = pick_device()
    assert picked.type == name
    return picked


def to(device, *tensors):
    return [t.to(device) for t in tensors]


def assert_close(actual: torch.Tensor, expected: torch.Tensor, device: torch.device):
    assert actual.device.type == device.type  # really computed there
    torch.testing.assert_close(actual.cpu(), expected, **TOL[device.type])


def gpt(style: str, **kwargs) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=23, max_len=16, d_model=16, num_heads=4, num_layers=2,
                         d_ff=32, style=style, **kwargs)).eval()


def encoder_decoder() -> Transformer:
    torch.manual_seed(0)
    return Transformer(11, 13, d_model=16, num_heads=4, num_layers=2, d_ff=32).eval()


def test_attention_function(device):
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)  # [B=2, H=4, L=S=5, d_k=8] each
    # causal, and the second row's last two keys are padding
    mask = causal_mask(5) & padding_mask(torch.tensor([5, 3]), 5)  # [B, 1, 5, 5]
    out, weights = mha.scaled_dot_product_attention(q, k, v, mask)
    out_d, weights_d = mha.scaled_dot_product_attention(*to(device, q, k, v, mask))
    assert_close(out_d, out, device)
    assert_close(weights_d, weights, device)


@pytest.mark.parametrize("num_kv_heads", [None, 2], ids=["mha", "gqa"])
def test_multi_head_attention_self_and_cross(device, num_kv_heads):
    torch.manual_seed(0)
    module = MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads).eval()
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    memory_mask = padding_mask(torch.tensor([7, 4]), 7)
    moved = copy.deepcopy(module).to(device)
    for need_weights in (False, True):  # the fused path and the explicit one
        out, _ = module(x, mask=causal_mask(5), need_weights=need_weights)
        out_d, _ = moved(*to(device, x), mask=causal_mask(5, device=device), need_weights=need_weights)
        assert_close(out_d, out, device)
        out, _ = module(x, memory, mask=memory_mask, need_weights=need_weights)
        out_d, _ = moved(*to(device, x, memory), mask=memory_mask.to(device), need_weights=need_weights)
        assert_close(out_d, out, device)


def test_encoder_decoder_and_its_decoding(device):
    model = encoder_decoder()
    moved = copy.deepcopy(model).to(device)
    src, tgt = torch.randint(1, 11, (2, 6)), torch.randint(1, 13, (2, 5))
    src_mask = padding_mask(torch.tensor([6, 4]), 6)
    with torch.no_grad():
        assert_close(moved(*to(device, src, tgt), src_mask=src_mask.to(device)),
                     model(src, tgt, src_mask=src_mask), device)
    for use_cache in (True, False):
        expected = mha.greedy_decode(model, src, 6, 1, 2, use_cache=use_cache, src_mask=src_mask)
        got = mha.greedy_decode(moved, src.to(device), 6, 1, 2, use_cache=use_cache,
                                src_mask=src_mask.to(device))
        assert torch.equal(got.cpu(), expected)


def test_beam_search(device):
    model = encoder_decoder()
    moved = copy.deepcopy(model).to(device)
    src = torch.randint(1, 11, (2, 6))
    src_mask = padding_mask(torch.tensor([6, 4]), 6)
    tokens, scores = mha.beam_search(model, src, beam_size=3, max_len=6, bos_id=1, eos_id=2,
                                     src_mask=src_mask)
    tokens_d, scores_d = mha.beam_search(moved, src.to(device), beam_size=3, max_len=6, bos_id=1,
                                         eos_id=2, src_mask=src_mask.to(device))
    assert torch.equal(tokens_d.cpu(), tokens)
    assert_close(scores_d, scores, device)


@pytest.mark.parametrize("style, extra", [("gpt2", {}), ("llama", {"num_kv_heads": 2}),
                                          ("gpt2", {"positions": "alibi"})],
                         ids=["gpt2", "llama-gqa-rope", "alibi"])
def test_gpt_logits_loss_and_gradients(device, style, extra):
    model = gpt(style, **extra)
    moved = copy.deepcopy(model).to(device)
    tokens = torch.randint(0, 23, (2, 9))
    assert_close(moved(tokens.to(device)), model(tokens), device)
    loss, loss_d = model.loss(tokens), moved.loss(tokens.to(device))
    assert_close(loss_d, loss, device)
    loss.backward()
    loss_d.backward()
    for (name, p), p_d in zip(model.named_parameters(), moved.parameters()):
        assert_close(p_d.grad, p.grad, device)


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_generation_with_a_cache(device, style):
    model = gpt(style)
    moved = copy.deepcopy(model).to(device)
    prompt = torch.randint(0, 23, (2, 4))
    expected = mha.generate(model, prompt, 8, temperature=0)
    for use_cache in (True, False):
        got = mha.generate(moved, prompt.to(device), 8, temperature=0, use_cache=use_cache)
        assert torch.equal(got.cpu(), expected)
    # sampling needs a generator on the model's device (each device has its own random
    # stream, so only the CPU reproduces the CPU's samples)
    sampled = mha.generate(moved, prompt.to(device), 8, temperature=1.0, top_k=5,
                           generator=torch.Generator(device).manual_seed(0))
    assert sampled.device.type == device.type and sampled.shape == (2, 12)
    if device.type == "cpu":
        assert torch.equal(sampled, mha.generate(model, prompt, 8, temperature=1.0, top_k=5,
                                                 generator=torch.Generator().manual_seed(0)))


def test_the_training_loops_train_on_the_chosen_device_and_give_the_model_back(device):
    """``train_lm(device=None)`` follows MHA_DEVICE; the model ends where it started."""
    from mha.course.corpus import train_lm
    from mha.course.training import build_model, train

    ids = torch.randint(0, 23, (500,), generator=torch.Generator().manual_seed(0))
    kwargs = dict(steps=3, batch_size=4, length=8, progress=False)
    reference, model = gpt("gpt2"), gpt("gpt2")
    expected = train_lm(reference, ids, device="cpu", **kwargs)["loss"]
    got = train_lm(model, ids, **kwargs)["loss"]  # device from MHA_DEVICE
    torch.testing.assert_close(torch.tensor(got), torch.tensor(expected), **TOL[device.type])
    assert next(model.parameters()).device.type == "cpu"
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q, **TOL[device.type])

    small = dict(d_model=8, d_ff=16, num_layers=1)
    reference, model = build_model(**small), build_model(**small)
    numbers = list(range(1, 200))
    expected = train(reference, numbers, steps=3, batch_size=8, device="cpu").loss
    got = train(model, numbers, steps=3, batch_size=8).loss
    torch.testing.assert_close(torch.tensor(got), torch.tensor(expected), **TOL[device.type])
    assert next(model.parameters()).device.type == "cpu"
