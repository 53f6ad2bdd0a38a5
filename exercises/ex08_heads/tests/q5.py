from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_ablate_kv_head(ablate_kv_head, env):
    import copy
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_tensor, forbid, randn, reference
    from mha.course.mistakes import hints as catalogued
    why = "compute the layer's attention yourself from its projections, as in question 2."
    forbid(ablate_kv_head, 'ablate_kv_head', {name: why for name in ('deepcopy', 'copy', 'load_state_dict', 'state_dict', 'register_forward_pre_hook', 'register_forward_hook', 'weight', 'bias', 'parameters', 'named_parameters', 'ablate_heads', 'mha.course.induction', 'mha.MultiHeadAttention')})

    def without_values(layer, kv_head):
        """The reference: the layer whose value projection gives zeros for key/value head kv_head."""
        other, d = (copy.deepcopy(layer), layer.head_dim)
        other.v_proj.weight[kv_head * d:(kv_head + 1) * d] = 0.0
        other.v_proj.bias[kv_head * d:(kv_head + 1) * d] = 0.0
        return other

    def zeroing(layer, heads):
        """The layer's output when the listed query heads output zeros (chapter 8's hook)."""
        d = layer.head_dim

        def zero_heads(module, args):
            concat = args[0].clone()
            for h in heads:
                concat[..., h * d:(h + 1) * d] = 0.0
            return (concat,) + args[1:]
        handle = layer.o_proj.register_forward_pre_hook(zero_heads)
        try:
            return layer(x)[0]
        finally:
            handle.remove()
    torch.manual_seed(0)
    layer = mha.MultiHeadAttention(12, 6, num_kv_heads=2).eval()
    x = randn(2, 5, 12, seed=84)
    with torch.no_grad(), reference(env, grouped_attention=lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), repeat_kv=mha.repeat_kv):
        expected = without_values(layer, 1)(x)[0]
        hints = catalogued('ex08', 'q5', one_query_head=zeroing(layer, [1]), tiled_group=zeroing(layer, [1, 3, 5])) + [(layer(x)[0], "nothing was removed: zero the chosen head's output before o_proj.")]
        got = call(ablate_kv_head, 'ablate_kv_head', layer=layer, x=x, kv_head=1)
        check_tensor(got, expected, 'ablate_kv_head(layer, x, 1) for 6 query heads sharing 2 key/value heads', hints)

