from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_general_test(test_attention):
    from mha.course.checks import check_test_catches
    from mha.course.planted_bugs import attention_with_bug
    buggy = [('the floor-division bug', attention_with_bug('floor_division')), ('the softmax-axis bug', attention_with_bug('softmax_axis')), ('the inverted-mask bug', attention_with_bug('mask_polarity'))]
    check_test_catches(test_attention, 'test_attention', correct=[('the reference', attention_with_bug())], buggy=buggy)

