from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_ablated_loss(ablated_loss, env):
    import torch
    from mha.course import induction
    from mha.course.checks import CheckFailed, call, check_tensor, forbid
    from mha.course.mistakes import hints as catalogued
    forbid(ablated_loss, 'ablated_loss', {'ablate_heads': 'remove the head yourself.', 'evaluate': 'compute the loss yourself.', 'ablation_table': 'remove the head yourself.'})
    notebook = env.get('induction')
    if notebook is None:
        raise CheckFailed("the checks need the setup cell's `from mha.course import induction`: run it again.")
    model = induction.exercise_model()
    batch = induction.copy_batch(32, generator=torch.Generator().manual_seed(163))
    d_k = model.attns[0].head_dim

    def loss_with(module, change, before=True):
        """The copy loss with `change` applied to the input (before) or to the output of `module`."""
        if before:
            handle = module.register_forward_pre_hook(lambda m, args: (change(args[0].clone()),))
        else:
            handle = module.register_forward_hook(lambda m, args, out: change(out.clone()))
        try:
            with torch.no_grad():
                return torch.tensor(induction.copy_loss(model(batch.tokens)[0], batch).item())
        finally:
            handle.remove()

    def zero(axis, h):

        def change(x):
            x.narrow(axis, h * d_k, min(d_k, x.shape[axis] - h * d_k)).zero_()
            return x
        return change
    with torch.no_grad():
        full = model(batch.tokens)[0]
    for layer, head in [(0, 1), (1, 0)]:
        resident = notebook.exercise_model()
        got = call(ablated_loss, 'ablated_loss', model=resident, batch=batch, layer=layer, head=head)
        if isinstance(got, (int, float)) or (isinstance(got, torch.Tensor) and got.numel() == 1):
            got = torch.tensor(float(got))
        attn = model.attns[layer]
        hints = catalogued('ex16', 'q2', sequence_axis=loss_with(attn.o_proj, zero(1, head)), o_proj_output=loss_with(attn.o_proj, zero(-1, head), before=False), query_zeroed=loss_with(attn.q_proj, zero(-1, head), before=False), layer_and_head_swapped=torch.tensor(induction.evaluate(model, batch, [(head, layer)])), nothing_removed=torch.tensor(induction.evaluate(model, batch)))
        check_tensor(got, torch.tensor(induction.evaluate(model, batch, [(layer, head)])), f'ablated_loss(model, batch of 32, layer={layer}, head={head}) on the given model', hints, atol=0.0001)
        after = resident(batch.tokens)[0]
        check_tensor(after, full, f'the logits of the model after ablated_loss(model, batch, layer={layer}, head={head}) returned', catalogued('ex16', 'q2', left_in_model=lambda logits: True), atol=0.0001)

@test_case(points=None, hidden=True)
def test_ablated_loss_random_models(ablated_loss, env):
    import torch
    from mha.course import induction
    from mha.course.checks import call, check_tensor, randn, random_sizes
    notebook = env.get('induction')
    for seed in range(3):
        H, half, V, P = random_sizes(1650 + seed, 4, 2, 6)
        layers, T, d_k = (2 + seed % 2, 2 * (P + 3), 2 * half)
        positions = ['rope', 'learned', 'rope'][seed]
        with torch.random.fork_rng(devices=[]):
            model = induction.AttentionOnly(V + 4, H * d_k, H, layers, T, positions).eval()
        with torch.no_grad():
            for number, (name, p) in enumerate(model.named_parameters()):
                if 'norm' not in name:
                    p.copy_(0.4 * randn(*p.shape, seed=100 * seed + number))
        batch = induction.copy_batch(8, seq_len=T, vocab_size=V + 4, min_len=2, max_len=P + 3, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            full = model(batch.tokens)[0]
        resident = notebook.AttentionOnly(V + 4, H * d_k, H, layers, T, positions)
        resident.load_state_dict(model.state_dict())
        resident.eval()
        for layer, head in [(layers - 1, H - 1), (0, seed % H)]:
            got = call(ablated_loss, 'ablated_loss', model=resident, batch=batch, layer=layer, head=head)
            if isinstance(got, (int, float)) or (isinstance(got, torch.Tensor) and got.numel() == 1):
                got = torch.tensor(float(got))
            what = f'ablated_loss for a random {layers}-layer model ({positions} positions) of {H} heads of width {d_k}, layer={layer}, head={head}'
            check_tensor(got, torch.tensor(induction.evaluate(model, batch, [(layer, head)])), what, atol=0.0001)
            check_tensor(resident(batch.tokens)[0], full, f'the logits of that model after {what}', atol=0.0001)

