from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_model(GPT, env):
    import torch
    from mha.course import capstone
    from mha.course.checks import CheckFailed, call, check_raises, check_tensor, forbid, reference
    forbid(GPT.forward, 'GPT.forward', {'mha.GPT': 'build the model from your own pieces.', 'mha.gpt': 'build the model from your own pieces.', 'super': 'compute the logits in forward yourself, not with the forward of a parent class.'})
    forbid(GPT.__init__, 'GPT.__init__', {'mha.GPT': 'build the model from your own pieces.', 'mha.gpt': 'build the model from your own pieces.', 'GPTConfig': 'build the model from your own pieces.', 'TransformerDecoder': 'use your own Block.'})
    V, MAX_LEN, D, H, LAYERS, D_FF = (20, 12, 16, 4, 2, 32)

    def run_blocks(ref, x):
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        for block in ref.blocks:
            x, _ = block(x, mask)
        return x
    tokens = torch.randint(0, V, (2, MAX_LEN), generator=torch.Generator().manual_seed(155))
    with reference(env, CausalSelfAttention=capstone.CausalSelfAttention, Block=capstone.Block):
        torch.manual_seed(4)
        model = call(GPT, 'GPT', vocab_size=V, max_len=MAX_LEN, d_model=D, num_heads=H, num_layers=LAYERS, d_ff=D_FF)
        with torch.no_grad():
            got = call(model, 'GPT(20, max_len=12, ...)', tokens=tokens[:, :7])
        if got is None:
            raise CheckFailed('GPT(20, max_len=12, ...)(tokens [2, 7]) returned None. The stub still ends with `return None`: replace it with your implementation.')
        state = call(model.state_dict, 'model.state_dict')
        if 'lm_head.weight' in state and 'tok_embed.weight' in state and (not torch.equal(state['lm_head.weight'], state['tok_embed.weight'])):
            raise CheckFailed('lm_head.weight differs from tok_embed.weight: tie them, self.lm_head.weight = self.tok_embed.weight (one [V, D] matrix, read both ways).')
        try:
            ref = capstone.reference_gpt(state, H)
        except capstone.CapstoneError as exc:
            raise CheckFailed(f'GPT(20, max_len=12, d_model=16, num_heads=4, num_layers=2, d_ff=32): {exc}') from None
        with torch.no_grad():
            for p in ref.parameters():
                p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.2)
        call(model.load_state_dict, 'load_state_dict', ref.state_dict())
        for T in (7, MAX_LEN):
            x = tokens[:, :T]
            with torch.no_grad():
                expected = ref(x)
                no_pos = ref.lm_head(ref.norm(run_blocks(ref, ref.tok_embed(x))))
                no_norm = ref.lm_head(run_blocks(ref, ref.tok_embed(x) + ref.pos_embed(torch.arange(T))))
                got = call(model, 'GPT(20, max_len=12, ...)', tokens=x)
            hints = [(no_pos, "add the learned positions: each token's embedding plus the embedding of its position 0 ... T-1."), (no_norm, 'apply the final LayerNorm `norm` before lm_head.')]
            check_tensor(got, expected, f'GPT(20, max_len=12, d_model=16, num_heads=4, num_layers=2, d_ff=32) on tokens [2, {T}], weights copied from mha.GPT', hints, atol=0.0001)
        too_long = torch.zeros(1, MAX_LEN + 1, dtype=torch.long)
        check_raises(model, 'GPT(20, max_len=12, ...)', ValueError, tokens=too_long, why='13 tokens do not fit max_len=12')
        try:
            model(too_long)
        except ValueError as exc:
            if '13' not in str(exc) or '12' not in str(exc):
                raise CheckFailed(f'the ValueError for tokens [1, 13] says {str(exc)!r}: say which T (13) and which max_len (12), so the user knows what to shorten.') from None

