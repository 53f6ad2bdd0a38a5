from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_test_catches_softmax_axis(test_catches_softmax_axis):
    from mha.course.checks import check_test_catches
    from mha.course.planted_bugs import attention_with_bug
    check_test_catches(test_catches_softmax_axis, 'test_catches_softmax_axis', correct=[('the reference', attention_with_bug())], buggy=[('an attention whose softmax runs over the queries (dim=-2)', attention_with_bug('softmax_axis'))])

