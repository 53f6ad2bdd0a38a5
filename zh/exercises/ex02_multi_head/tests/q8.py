from otter.test_files import test_case

OK_FORMAT = False

name = "q8"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_silenced_queries(weights_with_silenced_queries, prediction, env):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor, note, randn, reference
    from mha.course.mistakes import hints
    split = lambda t, H: t.view(t.shape[0], t.shape[1], H, t.shape[2] // H).transpose(1, 2)
    for B, L, D, H, head in ((2, 5, 12, 3, 1), (1, 4, 8, 2, 0)):
        torch.manual_seed(40 + D)
        layer = mha.MultiHeadAttention(D, H, bias=False)
        W_q, W_k = (layer.q_proj.weight.T.detach().clone(), layer.k_proj.weight.T.detach())
        x = randn(B, L, D, seed=41 + D)
        d = D // H
        with torch.no_grad():
            layer.q_proj.weight[head * d:(head + 1) * d] = 0
            expected = layer(x, need_weights=True)[1]
        with reference(env, split_heads=split):
            got = call(weights_with_silenced_queries, 'weights_with_silenced_queries', x=x, W_q=W_q, W_k=W_k, num_heads=H, head=head)
        found = hints('ex02', 'q8', wrong_block=lambda w: isinstance(w, torch.Tensor) and w.shape == expected.shape and (not bool(torch.allclose(w[:, head], expected[:, head], atol=1e-05))) and bool(torch.allclose(w[:, head].sum(-1), torch.ones(B, L), atol=1e-05)))
        check_tensor(got, expected, f'weights_with_silenced_queries(x [{B}, {L}, {D}], W_q, W_k, num_heads={H}, head={head}) against mha.MultiHeadAttention with those query columns zeroed', found)
    if not isinstance(prediction, dict) or prediction.get('this_head') not in ('a', 'b', 'c', 'd') or prediction.get('other_heads') not in ('a', 'b'):
        raise CheckFailed('prediction must map "this_head" to "a", "b", "c" or "d" and "other_heads" to "a" or "b" (the grade compares them with the measurement).')
    note('your prediction is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test compares it with the measurement).')

