from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_generate_greedy_slides(generate):
    import torch
    import torch.nn.functional as F
    from mha.course.checks import call, check_tensor, forbid
    forbid(generate, 'generate', {'mha.generate': 'write the loop yourself.', 'mha.generation': 'write the loop yourself.'})
    V, MAX_LEN = (11, 6)

    def window_model(tokens):
        if tokens.shape[1] > MAX_LEN:
            raise ValueError(f'{tokens.shape[1]} tokens exceed max_len={MAX_LEN}')
        weights = torch.arange(1, tokens.shape[1] + 1)
        next_token = (tokens * weights).sum(dim=1) % V
        return 5.0 * F.one_hot(next_token, V).float()[:, None, :].expand(-1, tokens.shape[1], -1)
    prompt = torch.tensor([[1, 2, 3, 4], [5, 0, 7, 9]])

    def reference_generate(keep):
        tokens = prompt
        for _ in range(12):
            tokens = torch.cat([tokens, window_model(keep(tokens))[:, -1].argmax(-1, keepdim=True)], dim=1)
        return tokens
    expected = reference_generate(lambda t: t[:, -MAX_LEN:])
    first = reference_generate(lambda t: t[:, :MAX_LEN])
    hints = [(first, 'keep the LAST max_len tokens: the newest ones matter most for the next token.')]
    errors = [('max_len', 'the model reads at most max_len tokens: feed it only the last max_len.')]
    got = call(generate, 'generate', model=window_model, prompt=prompt, max_new_tokens=12, max_len=MAX_LEN, temperature=0.0, error_hints=errors)
    check_tensor(got, expected, 'generate(a model that reads at most 6 tokens, prompt [2, 4], max_new_tokens=12, max_len=6, temperature=0) (greedy)', hints)

@test_case(points=None, hidden=False)
def test_generate_samples_with_temperature(generate):
    import torch
    import torch.nn as nn
    from mha.course.checks import CheckFailed, call
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    model = nn.Sequential(nn.Embedding(4, 4))
    with torch.no_grad():
        model[0].weight.copy_(logits.expand(4, 4))
    rows = 4000
    for tau in (0.5, 2.0):
        got = call(generate, 'generate', model=model, prompt=torch.zeros(rows, 1, dtype=torch.long), max_new_tokens=1, max_len=4, temperature=tau)
        what = f'generate(model whose logits are always [2, 1, 0, -1], prompt [{rows}, 1], max_new_tokens=1, temperature={tau})'
        if got is None:
            raise CheckFailed(f'{what} returned None. The stub still ends with `return None`: replace it with your implementation.')
        if not isinstance(got, torch.Tensor) or got.shape != (rows, 2):
            raise CheckFailed(f"{what}: expected tokens [{rows}, 2], got {getattr(got, 'shape', type(got).__name__)}.")
        frequencies = torch.bincount(got[:, 1].long().clamp(0, 3), minlength=4).double() / rows
        expected = torch.softmax(logits.double() / tau, dim=-1)
        if (frequencies - expected).abs().max() > 0.05:
            hint = ''
            if (frequencies - torch.softmax(logits.double() * tau, dim=-1)).abs().max() <= 0.05:
                hint = '\n  Hint: divide the logits by the temperature, softmax(z / tau): tau > 1 flattens the distribution.'
            elif frequencies.max() == 1:
                hint = '\n  Hint: with temperature > 0, sample with torch.multinomial(probabilities, 1) instead of taking the argmax.'
            raise CheckFailed(f'{what}: the tokens 0-3 came out with frequencies {[round(f, 3) for f in frequencies.tolist()]}; the softmax of the logits at temperature {tau} gives {[round(p, 3) for p in expected.tolist()]}.{hint}')

