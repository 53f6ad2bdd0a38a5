from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_self_attention(self_attention, env):
    import mha
    from mha.course.checks import call, check_pair, check_tensor, reference, running_example
    from mha.course.mistakes import hints
    x, _, w_q, w_k, w_v = running_example()
    with reference(env, attention=lambda q, k, v: mha.scaled_dot_product_attention(q, k, v)):
        result = call(self_attention, 'self_attention', x=x, W_q=w_q, W_k=w_k, W_v=w_v)
    out, weights = check_pair(result, 'self_attention(x, W_q, W_k, W_v)')
    ref_out, ref_weights = mha.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    found = hints('ex01', 'q4', no_projection=mha.scaled_dot_product_attention(x, x, x)[1], transposed_projection=mha.scaled_dot_product_attention(x @ w_q.T, x @ w_k.T, x @ w_v.T)[1])
    check_tensor(weights, ref_weights, 'the weights of self_attention on the running example', found)
    check_tensor(out, ref_out, 'the output of self_attention on the running example')

@test_case(points=None, hidden=True)
def test_self_attention_random_shapes(self_attention, env):
    import mha
    from mha.course.checks import call, check_pair, check_tensor, randn, random_sizes, reference
    for seed in range(2):
        B, L, D, d_k, d_v = random_sizes(400 + seed, 5, 2, 9)
        x = randn(B, L, D, seed=seed)
        w_q, w_k, w_v = (randn(D, d_k, seed=seed + 1), randn(D, d_k, seed=seed + 2), randn(D, d_v, seed=seed + 3))
        with reference(env, attention=lambda q, k, v: mha.scaled_dot_product_attention(q, k, v)):
            out, weights = check_pair(call(self_attention, 'self_attention', x=x, W_q=w_q, W_k=w_k, W_v=w_v), 'self_attention(x, W_q, W_k, W_v)')
        ref_out, ref_weights = mha.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
        check_tensor(weights, ref_weights, f'the weights for x {list(x.shape)}')
        check_tensor(out, ref_out, f'the output for x {list(x.shape)}, d_v = {d_v}')

