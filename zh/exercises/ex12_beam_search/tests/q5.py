from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_beam_step_finished(beam_step_finished, env):
    import math
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, reference
    from mha.course.mistakes import hints as catalogued
    from mha.course.references import beam_step as beam_step_ref
    sums = torch.tensor([[-1.0, -1.5, -3.0]])
    log_probs = torch.tensor([[[0.5, 0.45, 0.05], [0.6, 0.1, 0.3], [0.6, 0.2, 0.2]]]).log()
    finished = torch.tensor([[False, True, False]])
    expected = (torch.tensor([[-1.5, -1.0 + math.log(0.5), -1.0 + math.log(0.45)]]), torch.tensor([[1, 0, 0]]), torch.tensor([[2, 0, 1]]))
    best_two = [-1.0 + math.log(0.5), -1.0 + math.log(0.45)]
    hints = catalogued('ex12', 'q5', extends_finished=torch.tensor([best_two + [-1.5 + math.log(0.6)]]), drops_finished=torch.tensor([best_two + [-3.0 + math.log(0.6)]]), pays_eos_again=torch.tensor([best_two + [-1.5 + math.log(0.3)]]))
    with reference(env, beam_step=beam_step_ref):
        result = call(beam_step_finished, 'beam_step_finished', sums=sums, log_probs=log_probs, finished=finished, eos_id=2, beam_size=3)
    new_sums, parents, tokens = check_tuple(result, 'beam_step_finished(sums [[-1, -1.5, -3]], 3 tokens, hypothesis 1 finished, eos_id=2, beam_size=3)', ('new_sums', 'parents', 'tokens'))
    check_tensor(new_sums, expected[0], 'new_sums (worked by hand: -1.5, -1 + log 0.5, -1 + log 0.45)', hints)
    check_tensor(parents, expected[1], 'parents with finished hypotheses')
    check_tensor(tokens, expected[2], 'tokens with finished hypotheses')
    with reference(env, beam_step=beam_step_ref):
        result = call(beam_step_finished, 'beam_step_finished', sums=sums, log_probs=log_probs, finished=finished, eos_id=2, beam_size=4)
    new_sums, parents, tokens = check_tuple(result, 'beam_step_finished(the same, beam_size=4)', ('new_sums', 'parents', 'tokens'))
    hints = catalogued('ex12', 'q5', also_extended=torch.tensor([[-1.5] + best_two + [-1.5 + math.log(0.6)]]))
    check_tensor(new_sums, torch.tensor([[-1.5] + best_two + [-3.0 + math.log(0.6)]]), 'new_sums with beam_size=4 (worked by hand: -1.5, -1 + log 0.5, -1 + log 0.45, -3 + log 0.6)', hints)
    check_tensor(parents, torch.tensor([[1, 0, 0, 2]]), 'parents with beam_size=4')
    check_tensor(tokens, torch.tensor([[2, 0, 1, 0]]), 'tokens with beam_size=4')

