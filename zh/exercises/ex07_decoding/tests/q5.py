from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_sequence_log_prob(sequence_log_prob, env):
    import torch
    import mha
    from mha.course.checks import call, check_tensor, reference

    def step_by_step(model, src, tgt, src_mask):
        """The reference: decode the true prefix one position at a time."""
        memory = model.encode(src, src_mask)
        prefix, total = (torch.full_like(tgt[:, :1], 1), torch.zeros(tgt.shape[0]))
        for t in range(tgt.shape[1]):
            log_probs = torch.log_softmax(model.decode(prefix, memory, src_mask)[:, -1], dim=-1)
            total += log_probs.gather(-1, tgt[:, t:t + 1])[:, 0] * (tgt[:, t] != 0)
            prefix = torch.cat([prefix, tgt[:, t:t + 1]], dim=1)
        return total
    torch.manual_seed(4)
    model = mha.Transformer(11, 11, 16, 2, 2, 32).eval()
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    tgt = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])
    src_mask = mha.padding_mask(torch.tensor([5, 4]), 5)
    shift = lambda t, b: torch.cat([torch.full_like(t[:, :1], b), t[:, :-1]], dim=1)
    with torch.no_grad():
        expected = step_by_step(model, src, tgt, src_mask)
        log_probs = torch.log_softmax(model(src, shift(tgt, 1), src_mask), dim=-1).gather(-1, tgt[:, :, None])[:, :, 0]
        hints = [(step_by_step(model, src, tgt, None), 'the source is padded: pass its padding mask to the model, as in question 3.'), (log_probs.sum(-1), 'the padding of tgt is not part of the sequence: leave its positions out of the sum.'), (lambda s: s.shape == (2,) and bool(torch.allclose(s, log_probs.mean(-1), atol=1e-05)) or bool(torch.allclose(s, (log_probs * (tgt != 0)).sum(-1) / (tgt != 0).sum(-1), atol=1e-05)), "the log-probability of a sequence is the SUM of its tokens' log-probabilities, not their mean.")]
        with reference(env, shift_right=shift):
            got = call(sequence_log_prob, 'sequence_log_prob', model=model, src=src, tgt=tgt, bos_id=1, pad_id=0)
    check_tensor(got, expected, 'sequence_log_prob(model, src, tgt, bos_id=1, pad_id=0) on the example batch', hints)

