from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_swiglu(swiglu):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid, randn
    from mha.course.references import swiglu as reference_swiglu
    forbid(swiglu, 'swiglu', {'SwiGLU': 'write the gated product yourself.', 'references.swiglu': 'write the gated product yourself.'})
    x = randn(2, 5, 8, seed=73)
    W_gate, W_up, W_down = (randn(8, 24, seed=74) / 8 ** 0.5, randn(8, 24, seed=75) / 8 ** 0.5, randn(24, 8, seed=76) / 24 ** 0.5)
    expected = reference_swiglu(x, W_gate, W_up, W_down)
    hints = [(F.silu(x @ W_up) * (x @ W_gate) @ W_down, 'silu goes on the GATE, x @ W_gate; the up projection is not activated.'), (torch.relu(x @ W_gate) * (x @ W_up) @ W_down, "SwiGLU's gate uses silu (x * sigmoid(x)), not ReLU."), (F.silu(x @ W_gate) @ W_down, 'multiply the gate with the up projection x @ W_up before W_down.')]
    got = call(swiglu, 'swiglu', x=x, W_gate=W_gate, W_up=W_up, W_down=W_down)
    check_tensor(got, expected, 'swiglu(x [2, 5, 8], D_ff = 24) against mha.SwiGLU', hints)

