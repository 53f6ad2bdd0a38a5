from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_greedy_decode(greedy_decode):
    import torch
    import mha
    from exercise_checks import call, check_tensor, forbid
    forbid(greedy_decode, 'greedy_decode', {'mha.greedy_decode': 'write the decoding loop yourself.', 'new_caches': 'decode without a cache here.'})
    torch.manual_seed(4)
    model = mha.Transformer(11, 11, 16, 2, 2, 32).eval()
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    free = mha.greedy_decode(model, src, 8, 1, None, use_cache=False)
    eos = 8
    expected = mha.greedy_decode(model, src, 8, 1, eos, use_cache=False)

    def runs_on_after_eos(tokens):
        return any((eos in row[1:] and set(row[row.index(eos, 1):]) != {eos} for row in tokens.tolist()))

    def repeats_one_token(tokens):
        return all((len(set(row[1:])) == 1 for row in tokens.tolist()))
    hints = [(repeats_one_token, 'take the logits of the LAST position, logits[:, -1]: position t predicts token t + 1 (position 0 only ever sees BOS).'), (runs_on_after_eos, 'once a row has produced eos_id it is finished: append eos_id to it from then on.'), (free, 'stop when every row has produced eos_id.')]
    got = call(greedy_decode, 'greedy_decode', model=model, src=src, max_len=8, bos_id=1, eos_id=eos)
    check_tensor(got, expected, f'greedy_decode(model, src, max_len=8, bos_id=1, eos_id={eos})', hints)

