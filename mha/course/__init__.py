"""Course scaffolding, not attention: the running example, the numerals task, the small
training loop, plotting helpers and the exercises' feedback checks.

The attention code itself lives one level up, in ``mha``.
"""
