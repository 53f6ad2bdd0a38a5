"""Graded exercises: authoring (assign), self-checks and the instructor grading command (grade).

See grading/README.md.
"""
