from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3
all_or_nothing = True

@test_case(points=None, hidden=False)
def test_wider_beam_trap(wider_beam_trap):
    import torch
    from mha.course.checks import CheckFailed, call
    from mha.course.references import list_beam_search, table_model
    tables = call(wider_beam_trap, 'wider_beam_trap')
    if not isinstance(tables, torch.Tensor):
        raise CheckFailed('wider_beam_trap() returned None or not a tensor: it should return one tensor, tables [3, V, V].')
    tables = tables.double()
    if tables.dim() != 3 or tables.shape[0] != 3 or tables.shape[1] != tables.shape[2] or (tables.shape[1] < 2):
        raise CheckFailed(f'wider_beam_trap(): tables must be [3, V, V] with V >= 2; got {list(tables.shape)}.')
    if (tables < 0).any() or not torch.allclose(tables.sum(-1), torch.ones(tables.shape[:2], dtype=torch.float64), atol=1e-06):
        raise CheckFailed('wider_beam_trap(): every row tables[t, a] must be a probability distribution (entries >= 0, summing to 1).')
    model = table_model(tables.log())
    greedy, beam = (list_beam_search(model, 3, 1), list_beam_search(model, 3, 2))
    if not beam[0] < greedy[0] - 1e-09:
        raise CheckFailed(f'wider_beam_trap(): greedy decoding returns {greedy[1]} (log-probability {greedy[0]:.4f}), beam_size=2 returns {beam[1]} ({beam[0]:.4f}): the beam must end lower. Think about what the beam keeps at the second step that greedy does not, and what it has to drop to make room.')

