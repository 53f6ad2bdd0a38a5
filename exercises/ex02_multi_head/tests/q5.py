from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 1
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_heads_answer_is_a_choice(heads_answer):
    from mha.course.checks import CheckFailed, note
    if heads_answer is None:
        raise CheckFailed('heads_answer is None: set it to the letter of your choice, e.g. heads_answer = "a" (the hidden test checks the answer).')
    if not isinstance(heads_answer, str) or heads_answer.strip().lower() not in ('a', 'b', 'c', 'd'):
        raise CheckFailed(f'heads_answer should be one of "a", "b", "c", "d"; got {heads_answer!r}.')
    note('your answer is not checked here: its format is accepted, and whether it is right is graded by your instructor (a hidden test).')

