from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_fold_norm_weight(fold_norm_weight):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, randn
    from mha.course.references import rms_norm as reference_rms, swiglu as reference_swiglu
    x, weight = (randn(2, 5, 8, seed=83), randn(8, seed=84))
    W_gate, W_up, W_down = (randn(8, 24, seed=85) / 8 ** 0.5, randn(8, 24, seed=86) / 8 ** 0.5, randn(24, 8, seed=87) / 24 ** 0.5)
    errors = [('must match the size', "the shapes do not fit: the norm's weight has one number per INPUT feature of the projection. Along which axis of W do the input features run?")]
    result = call(fold_norm_weight, 'fold_norm_weight', weight=weight, W_gate=W_gate, W_up=W_up, error_hints=errors)
    new_gate, new_up = check_tuple(result, 'fold_norm_weight(weight [8], W_gate [8, 24], W_up [8, 24])', ('W_gate', 'W_up'))
    check_tensor(new_gate, weight[:, None] * W_gate, 'the folded W_gate [8, 24]', [(W_gate, 'the weight is not folded in: multiplying x by the weight before W must give the same as a W that already holds it.'), (lambda w: w.shape == (8, 24) and bool(torch.allclose(w, W_gate * weight.mean())), 'one factor for the whole projection is not enough: each input feature i has its own weight[i], and it meets only the part of W that input feature i multiplies.')])
    check_tensor(new_up, weight[:, None] * W_up, 'the folded W_up [8, 24]')
    folded = reference_swiglu(reference_rms(x, torch.ones(8)), new_gate, new_up, W_down)
    check_tensor(folded, reference_swiglu(reference_rms(x, weight), W_gate, W_up, W_down), 'swiglu(rms_norm(x, ones), folded weights) against the unfolded block', atol=0.0001)

@test_case(points=None, hidden=True)
def test_fold_norm_weight_random(fold_norm_weight):
    import torch
    from mha.course.checks import call, check_tensor, check_tuple, randn, random_sizes
    from mha.course.references import rms_norm as reference_rms, swiglu as reference_swiglu
    for seed in range(2):
        B, L, D, F_ = random_sizes(4400 + seed, 4, 2, 10)
        x, weight = (randn(B, L, D, seed=seed), randn(D, seed=seed + 1))
        W_gate, W_up, W_down = (randn(D, F_, seed=seed + 2), randn(D, F_, seed=seed + 3), randn(F_, D, seed=seed + 4))
        new_gate, new_up = check_tuple(call(fold_norm_weight, 'fold_norm_weight', weight=weight, W_gate=W_gate, W_up=W_up), 'fold_norm_weight', ('W_gate', 'W_up'))
        got = reference_swiglu(reference_rms(x, torch.ones(D)), new_gate, new_up, W_down)
        check_tensor(got, reference_swiglu(reference_rms(x, weight), W_gate, W_up, W_down), f'the folded block for D = {D}, D_ff = {F_}', atol=0.001, rtol=0.001)

