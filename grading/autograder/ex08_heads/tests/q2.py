from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_ablate_head(ablate_head):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn
    why = "remove the head yourself: the course's own ablation would do the question for you."
    forbid(ablate_head, 'ablate_head', {name: why for name in ('ablate_heads', 'mha.course.induction')})

    def without(layer, columns):
        """The layer with some value columns zeroed: those heads then output zeros."""
        other = mha.MultiHeadAttention(8, 4).eval()
        other.load_state_dict(layer.state_dict())
        other.v_proj.weight[columns] = 0.0
        other.v_proj.bias[columns] = 0.0
        return other
    torch.manual_seed(0)
    layer = mha.MultiHeadAttention(8, 4).eval()
    x = randn(2, 6, 8, seed=62)
    with torch.no_grad():
        full = layer(x)[0]
        for head in (0, 2):
            expected = without(layer, slice(2 * head, 2 * head + 2))(x)[0]
            hints = [(without(layer, slice(head, None, 4))(x)[0], "head h's output occupies the contiguous columns h*d:(h+1)*d of the merged tensor, not every H-th column."), (full, "nothing was removed: zero the chosen head's output before o_proj.")]
            got = call(ablate_head, 'ablate_head', layer=layer, x=x, head=head)
            check_tensor(got, expected, f'ablate_head(layer, x, {head}) for 4 heads', hints)

@test_case(points=None, hidden=True)
def test_ablate_head_random(ablate_head):
    import math
    import torch
    import mha
    from mha.course.checks import call, check_tensor, randn, random_sizes
    B, L, H, d = random_sizes(2800, 4, 2, 6)
    torch.manual_seed(5)
    layer = mha.MultiHeadAttention(H * d, H).eval()
    x = randn(B, L, H * d, seed=5)
    with torch.no_grad():
        q, k, v = (mha.split_heads(layer.q_proj(x), H), mha.split_heads(layer.k_proj(x), H), mha.split_heads(layer.v_proj(x), H))
        heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v
        heads[:, H - 1] = 0.0
        expected = layer.o_proj(mha.merge_heads(heads))
        check_tensor(call(ablate_head, 'ablate_head', layer=layer, x=x, head=H - 1), expected, f'ablate_head for H = {H}, d = {d}, removing the last head')

