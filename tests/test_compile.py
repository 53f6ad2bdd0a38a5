"""``train_lm(compile=True)``: torch.compile changes the speed, not the result.

Slow: compiling the forward and backward passes of even a tiny GPT takes tens of seconds on a
small CPU (TorchInductor generates and compiles C++); later calls reuse the compiled code.
Compiled kernels fuse operations and may sum in another order, hence a float32 tolerance
rather than bit-for-bit equality.
"""
import pytest
import torch

from mha import GPT, GPTConfig
from mha.course.corpus import train_lm


@pytest.mark.slow
def test_compiled_training_gives_the_eager_losses_and_weights():
    ids = torch.randint(0, 32, (1000,), generator=torch.Generator().manual_seed(0))
    runs = []
    for compile in (False, True):
        torch.manual_seed(0)
        model = GPT(GPTConfig(32, 16, 16, 2, 1, 32))
        history = train_lm(model, ids, steps=4, batch_size=4, length=12, progress=False,
                           device="cpu", compile=compile)
        runs.append((model, history["loss"]))
    (eager, eager_loss), (compiled, compiled_loss) = runs
    assert type(compiled) is GPT  # the learner's model object itself, not a wrapper
    torch.testing.assert_close(torch.tensor(compiled_loss), torch.tensor(eager_loss),
                               atol=1e-5, rtol=1e-5)
    for p, q in zip(compiled.parameters(), eager.parameters()):
        torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-4)
