from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_test_catches_floor_division(test_catches_floor_division):
    from mha.course.checks import check_test_catches
    from mha.course.planted_bugs import attention_with_bug
    check_test_catches(test_catches_floor_division, 'test_catches_floor_division', correct=[('the reference', attention_with_bug())], buggy=[('an attention that scales with // (floor division)', attention_with_bug('floor_division'))])

@test_case(points=None, hidden=True)
def test_test_catches_floor_division_elsewhere(test_catches_floor_division):
    import mha
    from mha.course.checks import check_test_catches
    from mha.course.planted_bugs import attention_with_bug
    correct = [('an einsum implementation', attention_with_bug(einsum=True)), ('mha.scaled_dot_product_attention', mha.scaled_dot_product_attention)]
    check_test_catches(test_catches_floor_division, 'test_catches_floor_division', correct=correct, buggy=[('an attention that scales with // (floor division), written with einsum', attention_with_bug('floor_division', einsum=True))])

