from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_test_catches_mask_polarity(test_catches_mask_polarity):
    import math
    import torch
    import mha
    from mha.course.checks import check_test_catches

    def variant(bug=None, einsum=False):
        """Attention as the exercise specifies it, with one bug planted (bug=None: correct)."""

        def attention(q, k, v, mask=None):
            scores = torch.einsum('...ld,...sd->...ls', q, k) if einsum else q @ k.transpose(-2, -1)
            scale = math.sqrt(k.shape[-2] if bug == 'sqrt_S' else q.shape[-1])
            scores = scores if bug == 'no_scaling' else scores // scale if bug == 'floor_division' else scores / scale
            if mask is not None and bug != 'mask_ignored':
                scores = scores.masked_fill(mask if bug == 'mask_polarity' else ~mask, float('-inf'))
            weights = torch.softmax(scores, dim=-2 if bug == 'softmax_axis' else -1)
            weights = torch.nan_to_num(weights, nan=0.0)
            return (weights @ k if bug == 'values_from_keys' else weights @ v, weights)
        return attention

    def built_in(q, k, v, mask=None):
        return mha.scaled_dot_product_attention(q, k, v, mask)
    check_test_catches(test_catches_mask_polarity, 'test_catches_mask_polarity', correct=[('the reference', variant())], buggy=[('an attention that blocks the keys the mask allows (inverted polarity)', variant('mask_polarity'))])

