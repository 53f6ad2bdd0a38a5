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
    forbid(attention_half, 'attention_half', {'scaled_dot_product_attention': 'compute the attention yourself.'})
    q, k, v = ((randn(2, 5, 16, seed=91) * 100).half(), (randn(2, 7, 16, seed=92) * 100).half(), randn(2, 7, 8, seed=93).half())
    exact = torch.softmax(q.double() @ k.double().transpose(-2, -1) / math.sqrt(16), dim=-1) @ v.double()
    got = call(attention_half, 'attention_half', q=q, k=k, v=v)
    if isinstance(got, torch.Tensor) and got.dtype != torch.float16:
        raise CheckFailed(f'attention_half(q, k, v) for float16 q [2, 5, 16] (entries up to ~400): the result is {got.dtype}; return float16 like the inputs (.half() or .to(q.dtype)).')
    hints = [(lambda o: bool(torch.isnan(o).any() | torch.isinf(o).any()), 'the dot products overflow float16 (largest finite number 65504): inf - inf = nan in the softmax. Keep the scores in a range float16 can hold, or compute them in float32 and cast the result back.')]
    check_tensor(got, exact, 'attention_half(q, k, v) for float16 q [2, 5, 16], k [2, 7, 16] with entries up to ~400', hints, atol=0.02, rtol=0.01)

