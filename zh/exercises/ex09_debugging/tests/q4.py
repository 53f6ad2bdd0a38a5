from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_test_catches_mask_polarity(test_catches_mask_polarity):
    from mha.course.checks import check_test_catches
    from mha.course.planted_bugs import attention_with_bug
    check_test_catches(test_catches_mask_polarity, 'test_catches_mask_polarity', correct=[('the reference', attention_with_bug())], buggy=[('an attention that blocks the keys the mask allows (inverted polarity)', attention_with_bug('mask_polarity'))])

