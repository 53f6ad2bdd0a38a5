from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 5
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_training_setup(make_model, make_optimizer, train_step, env):
    import math
    import torch
    from mha.course import capstone
    import torch.nn.functional as F
    from mha.course.checks import CheckFailed, call, check_equal, reference
    from mha.course.mistakes import hints as catalogued
    config = env.get('CONFIG')
    if not isinstance(config, dict) or 'num_heads' not in config:
        raise CheckFailed('CONFIG should be a dict with d_model, num_heads, num_layers and d_ff.')
    run = capstone.GRADED_RUN
    with reference(env, CausalSelfAttention=capstone.CausalSelfAttention, Block=capstone.Block, GPT=capstone.GPT):
        model = call(make_model, 'make_model')
        if model is None:
            raise CheckFailed('make_model() returned None. The stub still ends with `return None`: replace it with your implementation.')
        try:
            ref = capstone.reference_gpt(call(model.state_dict, 'model.state_dict'), config['num_heads'])
        except capstone.CapstoneError as exc:
            raise CheckFailed(f'make_model(): {exc}') from None
        parameters = sum((p.numel() for p in ref.parameters()))
        if ref.config.vocab_size != capstone.VOCAB_SIZE or ref.config.max_len < run['context']:
            raise CheckFailed(f'make_model() should build GPT(512, 64, **CONFIG): got vocab_size {ref.config.vocab_size}, max_len {ref.config.max_len}.')
        if parameters > run['max_parameters']:
            raise CheckFailed(f"make_model() has {parameters:,} parameters; the budget is {run['max_parameters']:,}.")
        optimizer = call(make_optimizer, 'make_optimizer', model=model)
        if optimizer is None:
            raise CheckFailed('make_optimizer(model) returned None. The stub still ends with `return None`: replace it with your implementation.')
        batch = torch.randint(0, capstone.VOCAB_SIZE, (2, run['context'] + 1), generator=torch.Generator().manual_seed(157))
        loss = call(train_step, 'train_step', model=model, optimizer=optimizer, batch=batch)
        if loss is None:
            raise CheckFailed("train_step(model, optimizer, batch [2, 65]) returned None. The stub still ends with `return None`: return the batch's loss, loss.item().")
        if not isinstance(loss, (int, float)) and (not (isinstance(loss, torch.Tensor) and loss.numel() == 1)):
            raise CheckFailed(f'train_step should return the loss as a number (loss.item()); it returned {type(loss).__name__}.')
        loss = float(loss)
        if not abs(loss - math.log(capstone.VOCAB_SIZE)) < 1.5:
            raise CheckFailed(f"train_step on a random batch of a fresh model returned the loss {loss:.3f}; a fresh model's loss is near ln(512) = 6.24 nats per token. Return the MEAN cross-entropy over the predicted tokens (F.cross_entropy's default), as a number.")
        after = call(model.state_dict, 'model.state_dict')
        before = ref.state_dict()
        if all((torch.equal(after[k], before[k]) for k in before if k in after)):
            raise CheckFailed('train_step did not change any weight: the gradients must be computed and the optimizer must take its step.')
    lr = 0.05

    def gradient(state, batch, inputs, targets):
        """The reference: the gradient of the mean cross-entropy of `targets` given `inputs`."""
        model = capstone.GPT(capstone.VOCAB_SIZE, 64, **config)
        model.load_state_dict(state)
        loss = F.cross_entropy(model(batch[:, inputs]).flatten(0, 1), batch[:, targets].flatten())
        loss.backward()
        return {name: p.grad for name, p in model.named_parameters()}

    def follows(delta, grad):
        """delta = -lr * c * grad for one c > 0 (clipping the gradient's norm is allowed)."""
        d = torch.cat([delta[name].flatten() for name in grad])
        g = torch.cat([grad[name].flatten() for name in grad])
        c = -(d @ g) / (g @ g)
        return bool(c > 0 and (d + c * g).norm() <= 0.001 * d.norm())
    with reference(env, CausalSelfAttention=capstone.CausalSelfAttention, Block=capstone.Block, GPT=capstone.GPT):
        model = call(make_model, 'make_model')
        if model is None:
            raise CheckFailed('make_model() returned None. The stub still ends with `return None`: replace it with your implementation.')
        given = call(make_optimizer, 'make_optimizer', model=model)
        sgd = env['torch'].optim.SGD(model.parameters(), lr=lr)
        optimizer = (sgd, env['torch'].optim.lr_scheduler.ConstantLR(sgd, factor=1.0, total_iters=0)) if isinstance(given, (tuple, list)) else sgd
        batches = [torch.randint(0, capstone.VOCAB_SIZE, (2, 65), generator=torch.Generator().manual_seed(seed)) for seed in (158, 159)]
        states = [{k: v.detach().clone() for k, v in call(model.state_dict, 'model.state_dict').items()}]
        for batch in batches:
            call(train_step, 'train_step', model=model, optimizer=optimizer, batch=batch)
            states.append({k: v.detach().clone() for k, v in call(model.state_dict, 'model.state_dict').items()})
    next_token = (slice(None, -1), slice(1, None))
    deltas = [{k: after[k] - before[k] for k in before} for before, after in zip(states, states[1:])]
    first = gradient(states[0], batches[0], *next_token)
    own_token = [gradient(states[0], batches[0], part, part) for part in next_token]
    reversed_shift = gradient(states[0], batches[0], slice(1, None), slice(None, -1))
    found = catalogued('ex15', 'q5', unshifted_targets=lambda _: any((follows(deltas[0], g) for g in own_token)), reversed_shift=lambda _: follows(deltas[0], reversed_shift))
    check_equal(follows(deltas[0], first), True, 'whether one step of train_step (with plain SGD, lr = 0.05, on a batch [2, 65]) moves the weights against the gradient of the next-token loss', found)
    second = gradient(states[1], batches[1], *next_token)
    both = {name: first[name] + second[name] for name in second}
    found = catalogued('ex15', 'q5', no_zero_grad=lambda _: follows(deltas[1], both))
    check_equal(follows(deltas[1], second), True, 'whether a second step of train_step moves the weights against the gradient of the second batch only', found)

