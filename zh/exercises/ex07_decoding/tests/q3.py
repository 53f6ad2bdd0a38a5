from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_greedy_decode(greedy_decode):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, forbid
    forbid(greedy_decode, 'greedy_decode', {'mha.greedy_decode': 'write the decoding loop yourself.', 'new_caches': 'decode without a cache here.'})
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    src_mask = mha.padding_mask(torch.tensor([5, 4]), 5)

    def repeats_one_token(tokens):
        return tokens.shape[1] > 2 and all((len(set(row[1:])) == 1 for row in tokens.tolist()))

    def rows_end_at_different_steps():
        """(model seed, eos_id) where row 0 produces eos_id first and then, unchecked, goes on."""
        for model_seed in range(30):
            torch.manual_seed(model_seed)
            free = mha.greedy_decode(mha.Transformer(11, 11, 16, 2, 2, 32).eval(), src, 8, 1, None, use_cache=False, src_mask=src_mask)[:, 1:].tolist()
            for eos in (2, 3, 4, 5, 6, 7, 8, 9, 10):
                first = [row.index(eos) if eos in row else 99 for row in free]
                if first[0] < first[1] and any((t != eos for t in free[0][first[0] + 1:])):
                    return (model_seed, eos)
        raise RuntimeError('no such model among 30 seeds')
    other_seed, other_eos = rows_end_at_different_steps()
    for model_seed, max_len, eos in [(4, 8, 2), (4, 5, 10), (other_seed, 8, other_eos)]:
        torch.manual_seed(model_seed)
        model = mha.Transformer(11, 11, 16, 2, 2, 32).eval()
        expected = mha.greedy_decode(model, src, max_len, 1, eos, use_cache=False, src_mask=src_mask)

        def runs_on_after_eos(tokens):
            return any((eos in row[1:] and set(row[row.index(eos, 1):]) != {eos} for row in tokens.tolist()))
        hints = [(repeats_one_token, 'every step produced the same token: the decoder must read the tokens generated so far (append each new token to `tokens` and decode them all), and its prediction for the next token is at the LAST position.'), (runs_on_after_eos, 'once a row has produced eos_id it is finished: append eos_id to it from then on.'), (mha.greedy_decode(model, src, max_len, 1, None, use_cache=False, src_mask=src_mask), 'stop when every row has produced eos_id.'), (mha.greedy_decode(model, src, max_len, 1, eos, use_cache=False), 'the source is padded: the padding must be masked (True = real token) in model.encode AND in model.decode.'), (lambda t: t.shape[-1] == max_len + 1, 'max_len counts bos_id: generate at most max_len - 1 tokens.')]
        got = call(greedy_decode, 'greedy_decode', model=model, src=src, max_len=max_len, bos_id=1, eos_id=eos, pad_id=0)
        what = f'greedy_decode(model, src, max_len={max_len}, bos_id=1, eos_id={eos}, pad_id=0) with the model of torch.manual_seed({model_seed})'
        check_tensor(got, expected, what + (' (no row produces 10: the run stops at max_len)' if max_len == 5 else ''), hints)

