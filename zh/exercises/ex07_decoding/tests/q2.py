from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_teacher_forcing_loss(teacher_forcing_loss, env):
    import torch
    import torch.nn.functional as F
    import mha
    from mha.course.checks import call, check_tensor, reference
    torch.manual_seed(0)
    model = mha.Transformer(11, 11, 16, 2, 2, 32).eval()
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    tgt = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])
    shift = lambda t, b: torch.cat([torch.full_like(t[:, :1], b), t[:, :-1]], dim=1)
    loss = lambda logits, pad: F.cross_entropy(logits.reshape(-1, 11), tgt.reshape(-1), ignore_index=pad)
    src_mask = mha.padding_mask(torch.tensor([5, 4]), 5)
    with torch.no_grad():
        expected = loss(model(src, shift(tgt, 1), src_mask=src_mask), 0)
        hints = [(loss(model(src, tgt, src_mask=src_mask), 0), 'the decoder must read the shifted targets, shift_right(tgt, bos_id): fed tgt itself, it sees the token it has to predict.'), (F.cross_entropy(model(src, shift(tgt, 1), src_mask=src_mask).reshape(-1, 11), tgt.reshape(-1)), 'ignore the padded positions: F.cross_entropy(..., ignore_index=pad_id).'), (F.cross_entropy(model(src, shift(tgt, 1), src_mask=src_mask).reshape(-1, 11), shift(tgt, 1).reshape(-1), ignore_index=0), "compare the logits with the targets tgt themselves: the shifted sequence is the decoder's input, what it must predict is tgt."), (loss(model(src, shift(tgt, 1)), 0), "the second source is padded: without its padding mask the encoder and the cross-attention attend to the padding. Pass the source's padding mask to the model, as chapter 7 does.")]
        with reference(env, shift_right=shift):
            got = call(teacher_forcing_loss, 'teacher_forcing_loss', model=model, src=src, tgt=tgt, bos_id=1, pad_id=0)
        if isinstance(got, float):
            got = torch.tensor(got)
        check_tensor(got, expected, 'teacher_forcing_loss on the example batch', hints)

