from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_attention_half(attention_half):
    import math
    import torch
    from mha.course.checks import CheckFailed, call, check_tensor, forbid, randn
    from mha.course.mistakes import classic_attention, hints
    forbid(attention_half, 'attention_half', {'scaled_dot_product_attention': 'compute the attention yourself.'})
    q, k, v = ((randn(2, 5, 16, seed=91) * 100).half(), (randn(2, 7, 16, seed=92) * 100).half(), randn(2, 7, 8, seed=93).half())
    exact = torch.softmax(q.double() @ k.double().transpose(-2, -1) / math.sqrt(16), dim=-1) @ v.double()
    got = call(attention_half, 'attention_half', q=q, k=k, v=v)
    if isinstance(got, torch.Tensor) and got.dtype != torch.float16:
        raise CheckFailed(f'attention_half(q, k, v) for float16 q [2, 5, 16] (entries up to ~400): the result is {got.dtype}; return float16 like the inputs.')
    classic = classic_attention(q.double(), k.double(), v.double())
    found = hints('ex01', 'q5', overflow16=lambda o: bool(torch.isnan(o).any() | torch.isinf(o).any()), no_scale=classic['no_scale'][0], softmax_axis=classic['softmax_axis'][0])
    check_tensor(got, exact, 'attention_half(q, k, v) for float16 q [2, 5, 16], k [2, 7, 16] with entries up to ~400', found, atol=0.02, rtol=0.01)
    q, k, v = ((randn(2, 5, 32, seed=96) * 250).half(), (randn(2, 7, 32, seed=97) * 250).half(), randn(2, 7, 8, seed=98).half())
    exact = torch.softmax(q.double() @ k.double().transpose(-2, -1) / math.sqrt(32), dim=-1) @ v.double()
    got = call(attention_half, 'attention_half', q=q, k=k, v=v)
    found = hints('ex01', 'q5', prescaled=lambda o: bool(torch.isnan(o).any() | torch.isinf(o).any()))
    check_tensor(got, exact, 'attention_half(q, k, v) for float16 q [2, 5, 32], k [2, 7, 32] with entries up to ~1000', found, atol=0.02, rtol=0.01)
    q, k = ((randn(2, 5, 16, seed=94) * 2).half(), (randn(2, 7, 16, seed=95) * 2).half())
    classic = classic_attention(q.double(), k.double(), v.double())
    got = call(attention_half, 'attention_half', q=q, k=k, v=v)
    found = hints('ex01', 'q5', no_scale=classic['no_scale'][0], softmax_axis=classic['softmax_axis'][0])
    check_tensor(got, classic['reference'][0], 'attention_half(q, k, v) for float16 q [2, 5, 16], k [2, 7, 16] with entries ~ 2 x N(0, 1)', found, atol=0.02, rtol=0.01)

