from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_greedy_decode_min_len(greedy_decode_min_len):
    import torch
    import mha
    from mha.course.checks import CheckFailed, call, check_tensor
    from mha.course.mistakes import hints
    models = []
    for seed, eos_bias in ((4, 2.5), (6, 0.5)):
        torch.manual_seed(seed)
        models.append(mha.Transformer(11, 11, 16, 2, 2, 32).eval())
        with torch.no_grad():
            models[-1].generator.bias[2] += eos_bias
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    for which, max_len, min_len in ((0, 8, 3), (0, 4, 5), (1, 10, 2)):
        model = models[which]
        got = call(greedy_decode_min_len, 'greedy_decode_min_len', model=model, src=src, max_len=max_len, min_len=min_len, bos_id=1, eos_id=2, pad_id=0)
        what = f'greedy_decode_min_len(model {which + 1}, src, max_len={max_len}, min_len={min_len}, bos_id=1, eos_id=2, pad_id=0)'
        if not isinstance(got, torch.Tensor) or got.dim() != 2 or got.shape[0] != 2 or (not 2 <= got.shape[1] <= max_len) or got.is_floating_point():
            check_tensor(got, torch.ones(2, max_len, dtype=torch.long), what)
        if not bool((got[:, 0] == 1).all()):
            raise CheckFailed(f'greedy_decode_min_len(model {which + 1}, max_len={max_len}, min_len={min_len}): every row must start with bos_id = 1.')
        with torch.no_grad():
            logits = model(src, got[:, :-1], (src != 0)[:, None, None, :])
        logits[:, :min_len, 2] = float('-inf')
        chosen = logits.argmax(-1)
        ended = torch.cumsum(got[:, 1:] == 2, dim=1) - (got[:, 1:] == 2).long() > 0
        expected = torch.cat([got[:, :1], chosen.masked_fill(ended, 2)], dim=1)
        early_eos = lambda t: isinstance(t, torch.Tensor) and t.shape == got.shape and bool((t[:, 1:min_len + 1] == 2).any())
        check_tensor(got, expected, f"the tokens of greedy_decode_min_len(model {which + 1}, max_len={max_len}, min_len={min_len}), each against the model's choice after your own prefix", hints('ex07', 'q6', too_early=early_eos))
        finished_at = [int((row == 2).nonzero()[0]) if bool((row == 2).any()) else None for row in got]
        last = max((f if f is not None else max_len - 1 for f in finished_at))
        if got.shape[1] > min(max_len, last + 1):
            raise CheckFailed(f'greedy_decode_min_len(model {which + 1}, max_len={max_len}, min_len={min_len}): {got.shape[1]} columns; the decoding should stop once every row has produced eos_id.')
        if got.shape[1] < min(max_len, last + 1):
            raise CheckFailed(f'greedy_decode_min_len(model {which + 1}, max_len={max_len}, min_len={min_len}): {got.shape[1]} columns; the decoding should go on until every row has produced eos_id or max_len columns are written.')

