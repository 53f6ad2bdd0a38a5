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

