from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_feed_forward(FeedForward):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor, forbid, randn
    forbid(getattr(FeedForward, 'forward', None), 'FeedForward.forward', {'mha.FeedForward': 'apply the two layers and the ReLU yourself.'})
    torch.manual_seed(0)
    ffn = call(FeedForward, 'FeedForward', d_model=8, d_ff=32)
    ref = mha.FeedForward(8, 32)
    try:
        ffn.load_state_dict(ref.state_dict())
    except Exception as exc:
        raise CheckFailed(f'keep the layers expand and contract of the given __init__ ({type(exc).__name__})')
    x = randn(2, 6, 8, seed=21)
    with torch.no_grad():
        hints = [(ref.contract(ref.expand(x)), 'apply the ReLU between the two layers: without it the network is a single linear map.'), (torch.relu(ref.contract(ref.expand(x))), 'the ReLU goes between the layers, not after the second one.')]
        got = call(ffn, 'FeedForward.forward', x=x)
        check_tensor(got, ref(x), 'FeedForward(8, 32) on x [2, 6, 8]', hints)

