from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_fold_batch_norm(fold_batch_norm):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, randn
    from mha.course.mistakes import hints
    for d_in, d, seed in ((6, 6, 100), (5, 7, 110)):
        torch.manual_seed(seed)
        linear, norm = (torch.nn.Linear(d_in, d), torch.nn.BatchNorm1d(d))
        with torch.no_grad():
            for step in range(4):
                norm(linear(randn(8, d_in, seed=seed + step) * 2 + 1))
            norm.running_var[0] = 2e-06
            norm.weight.copy_(randn(d, seed=seed + 5))
            norm.bias.copy_(randn(d, seed=seed + 6))
        (linear.eval(), norm.eval())
        W, b = (linear.weight.detach().T.contiguous(), linear.bias.detach())
        mean, var, gamma, beta = (norm.running_mean, norm.running_var, norm.weight.detach(), norm.bias.detach())
        result = call(fold_batch_norm, 'fold_batch_norm', W=W, b=b, running_mean=mean, running_var=var, weight=gamma, bias=beta, eps=norm.eps)
        W_f, b_f = check_tuple(result, f'fold_batch_norm(...) for nn.Linear({d_in}, {d})', ('W_folded', 'b_folded'))
        scale = gamma / (var + norm.eps).sqrt()
        found = hints('ex06', 'q7', scaled_rows=W * scale[:, None] if d_in == d else None, no_eps=W * gamma / var.sqrt())
        check_tensor(W_f, W * scale, f'W_folded for nn.Linear({d_in}, {d}) and nn.BatchNorm1d({d}) after 4 training steps', [h for h in found if h[0] is not None])
        no_eps = (b - mean) * gamma / var.sqrt() + beta
        found = hints('ex06', 'q7', mean_kept=b * scale + beta, no_eps=no_eps)
        check_tensor(b_f, (b - mean) * scale + beta, f'b_folded for nn.Linear({d_in}, {d}) and nn.BatchNorm1d({d}) after 4 training steps', found)
        x = randn(10, d_in, seed=seed + 9)
        with torch.no_grad():
            check_tensor(x @ W_f + b_f, norm(linear(x)), f'x @ W_folded + b_folded against nn.BatchNorm1d (evaluation) after nn.Linear({d_in}, {d}), x [10, {d_in}]')

