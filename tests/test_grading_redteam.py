"""A red-team round against ``make grade`` (issue 31): each attack below must fail.

Some need a real sandbox and grade one notebook of exercise 1 with ``grade_notebook`` (as
``python -m grading.grade`` does for each student); the others read files or build models and
need none. The capstone's size checks run in a child process with a small address-space limit, so
that a regression fails the test instead of exhausting the machine's memory.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the grading package
from grading.grade import discover, file_name, known_exercises  # noqa: E402
from grading.sandbox import Limits, Sandbox  # noqa: E402
from grading.worker import Exercise, Notes, grade_notebook, inspect_submission  # noqa: E402

pytestmark = pytest.mark.slow

EXERCISE = "ex01_self_attention"
AUTOGRADER = ROOT / "grading" / "autograder" / EXERCISE
SOLUTION = AUTOGRADER / f"{EXERCISE}-solution.ipynb"
HANDED_OUT = ROOT / "exercises" / EXERCISE / f"{EXERCISE}.ipynb"
LIMITS = Limits(cell=20, call=5)


@pytest.fixture(scope="module")
def exercise():
    return Exercise.load(AUTOGRADER, HANDED_OUT)


def _needs_bwrap():
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: run `make grading-deps`")


def _solution():
    return nbformat.read(SOLUTION, as_version=4)


def _grade(raw: bytes, exercise, timeout: float = 300) -> dict:
    _needs_bwrap()
    return grade_notebook(raw, exercise, LIMITS, timeout)


def _texts(result: dict, kind: str | None = None) -> list[str]:
    return [n["text"] for n in result["notes"] if kind is None or n["kind"] == kind]


# ----------------------------------------------------------------------------- reading

def test_a_byte_order_mark_is_read_as_one(exercise):
    raw = "\ufeff".encode("utf-8") + SOLUTION.read_bytes()  # what a Windows editor writes
    result = _grade(raw, exercise)
    assert result["score"] == result["possible"] > 0, result["notes"]
    assert not any("not a readable notebook" in t for t in _texts(result))


def test_windows_line_endings_are_not_tampering(exercise):
    data = json.loads(SOLUTION.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        source = cell["source"]
        lines = source if isinstance(source, list) else source.splitlines(True)
        cell["source"] = [line.replace("\n", "\r\n") for line in lines]
    nb = nbformat.reads(json.dumps(data), as_version=4)
    notes = Notes()
    inspect_submission(nb, exercise, notes)
    assert [t for k, t in notes.items if k == "tampering"] == []


def test_the_exercise_is_read_from_the_metadata_after_a_byte_order_mark(tmp_path):
    path = tmp_path / "mine.ipynb"  # a file name that names no exercise
    path.write_bytes("\ufeff".encode("utf-8") + SOLUTION.read_bytes())
    (sub,) = discover(tmp_path, None, known_exercises())
    assert sub.exercise == EXERCISE


# ----------------------------------------------------------------------------- "your code"

HELPER_WITH_A_BUG = '''def scale_of(q):
    return math.sqrt(q.shape[5])


def attention_scores(q, k):
    return q @ k.transpose(-2, -1) / scale_of(q)
'''


def test_your_code_quotes_only_the_learners_cells(exercise):
    nb = _solution()
    cell = next(c for c in nb.cells if c.cell_type == "code"
                and c.source.startswith("def attention_scores("))
    cell.source = HELPER_WITH_A_BUG
    result = _grade(nbformat.writes(nb).encode(), exercise)
    messages = "\n".join(c["message"] for c in result["questions"]["q1"]["cases"])
    assert "in your code, function scale_of: `return math.sqrt(q.shape[5])`" in messages, messages
    assert "raise exc" not in messages and "_value" not in messages


# ----------------------------------------------------------------------------- names

def test_a_name_that_spells_another_students_file_name_gets_a_file_of_its_own():
    victim = "ann lee"  # escaped to ann_lee plus a hash anyone can compute
    impostor = file_name(victim)  # a folder named exactly like the victim's file
    assert file_name(impostor) != file_name(victim)


def test_every_file_name_carries_a_hash_of_the_exact_name():
    assert file_name("alice") != "alice" and file_name("alice").startswith("alice-")
    assert file_name("alice") != file_name("alice\u00a0")


def test_a_look_alike_name_is_another_student_and_a_note_says_so(tmp_path):
    exercises = known_exercises()
    shutil.copy(SOLUTION, tmp_path / "alice.ipynb")
    shutil.copy(HANDED_OUT, tmp_path / "alice\u00a0.ipynb")  # newer, empty, a no-break space
    old = time.time() - 3600
    os.utime(tmp_path / "alice.ipynb", (old, old))
    subs = discover(tmp_path, EXERCISE, exercises)
    assert sorted(s.student for s in subs) == ["alice", "alice\u00a0"]
    assert all(s.path.name == f"{s.student}.ipynb" for s in subs)
    for sub in subs:
        assert not any(kind == "duplicate" and "graded the most recently" in text
                       for kind, text in sub.notes), sub.notes
        assert any("alike" in text for _, text in sub.notes), sub.notes


# ----------------------------------------------------------------------------- one deadline

def test_a_notebook_of_twenty_thousand_cells_keeps_to_its_deadline(exercise):
    nb = nbformat.read(HANDED_OUT, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(f"# /proc/ {i}") for i in range(20_000)]
    raw = nbformat.writes(nb).encode()
    assert len(raw) > 2_000_000
    started = time.monotonic()
    result = _grade(raw, exercise, timeout=10)
    assert time.monotonic() - started < 10 + 30, result["notes"][:3]
    assert len(result["notes"]) <= 60
    assert any("more" in t for t in _texts(result, "tampering")), result["notes"][-3:]


# ----------------------------------------------------------------------------- the capstone's sizes

def _in_small_process(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` with 3 GB of address space: an attempt to build a huge model fails there."""
    return subprocess.run(["prlimit", f"--as={3 * 2**30}", "--", sys.executable, "-c",
                           textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_empty_weights_that_claim_huge_sizes_are_refused_before_anything_is_built():
    done = _in_small_process("""
        import torch
        from mha.course import capstone
        real = {"tok_embed.weight": torch.zeros(512, 64), "pos_embed.weight": torch.zeros(64, 64)}
        huge_d_ff = {**real, "blocks.0.mlp.fc.weight": torch.empty(4_000_000_000, 0)}
        many_layers = {**real, **{f"blocks.{i}.mlp.fc.weight": torch.empty(256, 0)
                                  for i in range(100_000)}}
        for state in (huge_d_ff, many_layers):
            try:
                capstone.reference_gpt(state, 4)
            except capstone.CapstoneError as exc:
                print("refused:", exc)
        """)
    assert done.stdout.count("refused:") == 2, done.stdout + done.stderr[-2000:]


def test_a_config_past_the_parameter_budget_is_refused_before_the_model_is_built():
    done = _in_small_process("""
        from mha.course import capstone
        config = dict(d_model=1_000_000, num_heads=4, num_layers=1, d_ff=4_000_000)
        for build in (lambda: capstone.GPT(512, 64, **config),
                      lambda: capstone.Block(1_000_000, 4, 4_000_000),
                      lambda: capstone.CausalSelfAttention(1_000_000, 4)):
            try:
                build()
            except capstone.CapstoneError as exc:
                print("refused:", exc)
        """)
    assert done.stdout.count("refused:") == 3, done.stdout + done.stderr[-2000:]


# ----------------------------------------------------------------------------- the CPU budget

BURN_IN_CHILDREN = """import os, signal, time
try:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
except OSError as exc:
    refused = exc
for _ in range(3):
    if os.fork() == 0:
        end = time.process_time() + 1.0
        while time.process_time() < end:
            pass
        os._exit(0)
try:
    while True:  # (with SIGCHLD ignored: returns once all are gone, having reaped none)
        os.waitpid(-1, 0)
except ChildProcessError:
    pass
"""


def test_cpu_time_of_children_the_kernel_reaps_is_counted():
    _needs_bwrap()
    box = Sandbox(Limits(cell=60, call=5), time.monotonic() + 300)
    box.start()
    try:
        before = box.cpu_time()
        reply = box.request({"op": "run", "source": BURN_IN_CHILDREN}, 60)
        assert reply.get("error") is None, reply
        assert box.cpu_time() - before >= 2.5
    finally:
        box.kill("test done")


# ----------------------------------------------------------------------------- arguments changed in place

EX05 = "ex05_transformer_block"
REACH_IN_PLACE = (
    "moved = x.clone()\n    moved[:, position] += 1.0\n    return (model(moved) - model(x))",
    "before = model(x)\n    x[:, position] += 1.0\n    return (model(x) - before)")


def test_an_answer_that_changes_the_callers_tensor_in_place_is_seen_by_the_grader():
    """ex05 q7's ``reach`` that moves the token in the caller's ``x``: right values, but the
    argument crossed as a copy, so the grader's ``x`` never changes; the sandbox reports which
    tensor arguments a call changed (``Remote.changed_in_place``) and the hidden test asks."""
    autograder = ROOT / "grading" / "autograder" / EX05
    exercise = Exercise.load(autograder, ROOT / "exercises" / EX05 / f"{EX05}.ipynb")
    nb = nbformat.read(autograder / f"{EX05}-solution.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and REACH_IN_PLACE[0] in c.source]
    cell.source = cell.source.replace(*REACH_IN_PLACE)
    result = _grade(nbformat.writes(nb).encode(), exercise)
    q7 = result["questions"]["q7"]
    messages = "\n".join(c["message"] for c in q7["cases"])
    assert q7["score"] == 0, q7
    assert "leaves the caller's x as it was" in messages and "Hint:" in messages, messages
    assert result["score"] == result["possible"] - q7["possible"], result["questions"]


# ----------------------------------------------------------------------------- the capstone's graded data

OLD_PUBLIC_SEED = 1234  # GRADED_RUN's seed before issue 31: anyone could replay the draw


def test_the_capstone_batches_cannot_be_replayed_to_read_the_secret_relabelling():
    """Attack 3: a ``train_step`` (it runs in the sandbox) replays the grader's batch draw with
    the public seed on the public corpus; if each batch it receives is the replayed windows with
    the ids renamed by one consistent map, it has read the secret permutation off the batches
    (and then loads weights trained elsewhere, with the embedding rows permuted: 5/5 with no
    training). The graded run's batches come from fresh secret randomness: the replay fails."""
    import torch
    import torch.nn.functional as F
    from mha.course import capstone
    from mha.course.corpus import corpus_ids, random_windows

    run = {**capstone.GRADED_RUN, "steps": 3}
    real_train_ids = corpus_ids(capstone.VOCAB_SIZE)[0]  # the sandbox can rebuild the corpus

    def attack():
        replay = torch.Generator().manual_seed(OLD_PUBLIC_SEED)
        renamed: dict[int, int] = {}
        consistent = []

        def train_step(model, optimizer, batch):
            mine = random_windows(real_train_ids, run["batch_size"], run["context"] + 1, replay)
            pairs = zip(mine.flatten().tolist(), batch.flatten().tolist())
            consistent.append(all(renamed.setdefault(real, seen) == seen for real, seen in pairs))
            loss = F.cross_entropy(model(batch[:, :-1]).flatten(0, 1), batch[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.item()

        torch.manual_seed(0)
        capstone.train_and_evaluate(
            lambda: capstone.GPT(capstone.VOCAB_SIZE, run["context"], 16, 2, 1, 32),
            lambda model: torch.optim.SGD(model.parameters(), lr=0.1), train_step,
            num_heads=2, **run)
        return consistent

    for _ in range(2):  # a fresh draw each run, and no run the replay can read
        assert attack() == [False] * run["steps"]


# ----------------------------------------------------------------------------- what the bans cannot see

# Attack 7: three softmax answers that the recorder of the bans by behaviour does not see
# (grading/README.md, "What the sandbox does not cover"); the grader tells the instructor.
UNSEEN_SOFTMAX = {
    "operator.methodcaller": '''import operator

def softmax(scores):
    return operator.methodcaller("softmax", -1)(scores)
''',
    "a worker thread": '''from concurrent.futures import ThreadPoolExecutor

def softmax(scores):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(torch.softmax, scores, -1).result()
''',
    "code compiled under torch's file name": '''_library = {}
exec(compile("def softmax(scores):\\n    return scores.softmax(-1)\\n", torch.__file__, "exec"),
     _library)
softmax = _library["softmax"]
''',
}


@pytest.mark.parametrize("trick", sorted(UNSEEN_SOFTMAX))
def test_a_ban_evaded_where_the_recorder_cannot_see_is_noted_for_the_instructor(exercise, trick):
    nb = _solution()
    cell = next(c for c in nb.cells
                if c.cell_type == "code" and c.source.startswith("def softmax("))
    cell.source = UNSEEN_SOFTMAX[trick]
    notes = Notes()
    inspect_submission(nb, exercise, notes)
    assert any(kind == "other" and "the bans by behaviour" in text and "read this cell" in text
               for kind, text in notes.items), notes.items


def test_the_solutions_get_no_note_about_what_the_bans_cannot_see():
    from grading.submission import unseen_by_the_bans

    for solution in sorted((ROOT / "grading" / "autograder").glob("*/*-solution.ipynb")):
        nb = nbformat.read(solution, as_version=4)
        noted = [(solution.name, c.source[:60]) for c in nb.cells
                 if c.cell_type == "code" and unseen_by_the_bans(c.source)]
        assert noted == []
