from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_rms_norm(rms_norm):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn

    def reference_swiglu(x, W_gate, W_up, W_down):
        layer = mha.SwiGLU(W_gate.shape[0], W_gate.shape[1])
        with torch.no_grad():
            layer.gate_proj.weight.copy_(W_gate.T)
            layer.up_proj.weight.copy_(W_up.T)
            layer.down_proj.weight.copy_(W_down.T)
            return layer(x)

    def reference_rms(x, weight, eps=1e-06):
        norm = mha.RMSNorm(x.shape[-1], eps)
        with torch.no_grad():
            norm.weight.copy_(weight)
            return norm(x)
    forbid(rms_norm, 'rms_norm', {'RMSNorm': 'compute the root mean square yourself.', 'rms_norm': 'compute the root mean square yourself.', 'layer_norm': 'RMSNorm is not LayerNorm.'})
    weight = randn(8, seed=72)
    for x, what in [(randn(2, 5, 8, seed=71) * 3 + 1, 'x [2, 5, 8] (mean ~1)'), (randn(2, 5, 8, seed=70) * 0.001, 'x [2, 5, 8] with tiny entries (~0.001, where eps matters)')]:
        expected = reference_rms(x, weight)
        centred = x - x.mean(-1, keepdim=True)
        hints = [(centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + 1e-06) * weight, 'RMSNorm does not subtract the mean: divide x itself by its root mean square.'), (x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + 1e-06) * weight, 'the MEAN of the squares over the D features, not their sum.'), (x / (torch.sqrt(x.pow(2).mean(-1, keepdim=True)) + 1e-06) * weight, 'eps goes inside the square root: sqrt(mean(x^2) + eps).')]
        got = call(rms_norm, 'rms_norm', x=x, weight=weight)
        check_tensor(got, expected, f'rms_norm({what}, weight [8])', hints)

