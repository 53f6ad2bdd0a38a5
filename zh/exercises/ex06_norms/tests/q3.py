from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_batch_norm_module(BatchNorm):
    import torch
    from mha.course.checks import call, check_raises, check_tensor, forbid, randn
    forbid(getattr(BatchNorm, 'forward', None), 'BatchNorm.forward', {'F.batch_norm': 'compute the statistics yourself.', 'functional.batch_norm': 'compute the statistics yourself.', 'BatchNorm1d': 'compute the statistics yourself.', 'mha.BatchNorm': 'compute the statistics yourself.'})
    mine = call(BatchNorm, 'BatchNorm', d=8)
    ref = torch.nn.BatchNorm1d(8)
    with torch.no_grad():
        for step in range(3):
            x = randn(2, 5, 8, seed=40 + step) * (step + 1) + step
            flat = x.reshape(-1, 8)
            old_mean, old_var = (ref.running_mean.clone(), ref.running_var.clone())
            got = call(mine.train(), 'BatchNorm.forward (training)', x=x)
            check_tensor(got, ref.train()(flat).view(2, 5, 8), f'the training-mode output at step {step + 1}')
            hints = [(0.1 * old_mean + 0.9 * flat.mean(0), 'the momentum weighs the new batch: running = (1 - momentum) * running + momentum * batch.')]
            check_tensor(mine.running_mean, ref.running_mean, f'running_mean after training step {step + 1}', hints)
            hints = [(0.9 * old_var + 0.1 * flat.var(0, unbiased=False), 'the running variance uses the unbiased batch variance: multiply the biased one by n / (n - 1).')]
            check_tensor(mine.running_var, ref.running_var, f'running_var after training step {step + 1}', hints)
        x = randn(3, 4, 8, seed=49)
        expected = ref.eval()(x.reshape(-1, 8)).view(3, 4, 8)
        batch_stats = ref.train()(x.reshape(-1, 8)).view(3, 4, 8)
        hints = [(batch_stats, 'in evaluation mode (self.training is False) use running_mean and running_var, not the statistics of the batch.')]
        got = call(mine.eval(), 'BatchNorm.forward (evaluation)', x=x)
        check_tensor(got, expected, 'the evaluation-mode output after 3 training steps', hints)
        check_raises(mine.train(), 'BatchNorm.forward (training)', ValueError, x=randn(1, 1, 8, seed=50), why='one value per feature: the unbiased variance would divide by n - 1 = 0')

