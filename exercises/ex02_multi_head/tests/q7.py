from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_head_contributions(head_contributions, env):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    from mha.course.mistakes import hints
    forbid(head_contributions, 'head_contributions', {'scaled_dot_product_attention': "compute each head's attention yourself.", 'MultiheadAttention': "compute each head's attention yourself.", 'MultiHeadAttention': "compute each head's attention yourself."})
    split = lambda t, H: t.view(t.shape[0], t.shape[1], H, t.shape[2] // H).transpose(1, 2)
    for B, L, D, H in ((2, 5, 12, 3), (1, 4, 8, 2)):
        torch.manual_seed(30 + D)
        layer = mha.MultiHeadAttention(D, H, bias=False)
        W_q, W_k, W_v, W_o = (m.weight.T.detach() for m in (layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj))
        x = randn(B, L, D, seed=31 + D)
        d = D // H
        expected = []
        with torch.no_grad():
            for h in range(H):
                alone = mha.MultiHeadAttention(D, H, bias=False)
                alone.load_state_dict(layer.state_dict())
                keep = torch.zeros(D, dtype=torch.bool)
                keep[h * d:(h + 1) * d] = True
                alone.o_proj.weight[:, ~keep] = 0
                expected.append(alone(x)[0])
        expected = torch.stack(expected, dim=1)
        q, k, v = (split(x @ W_q, H), split(x @ W_k, H), split(x @ W_v, H))
        rows = W_o.reshape(H, d, D)
        with_weights = lambda w: w @ v @ rows
        found = hints('ex02', 'q7', w_o_transposed=torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v @ W_o.T.reshape(H, d, D), equal_share=layer(x)[0].detach()[:, None].expand(B, H, L, D) / H, no_scale=with_weights(torch.softmax(q @ k.transpose(-2, -1), dim=-1)), softmax_axis=with_weights(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-2)))
        with reference(env, split_heads=split):
            got = call(head_contributions, 'head_contributions', x=x, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, num_heads=H)
        check_tensor(got, expected, f'head_contributions for x [{B}, {L}, {D}], H = {H}, against mha.MultiHeadAttention with the other heads silenced', found)

