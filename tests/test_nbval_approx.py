"""The ``nbval-approx`` cell tag and the CPU kernels of ``make notebooks`` (root conftest.py).

A cell tagged ``nbval-approx`` holds results of training, whose last digits depend on the CPU's
vector kernels: its text must match exactly, its numbers only within a tolerance.
"""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
root_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root_conftest)
approximate = root_conftest.approximate


def stream(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def glued(value):
    return {"output_type": "display_data", "metadata": {},
            "data": {"application/papermill.record/text/plain": value}}


def test_close_numbers_are_replaced_by_the_stored_ones():
    ref = [stream("loss 2.2991765 ± 0.012, 8223 wrong\n"), glued("3.4471400")]
    run = [stream("loss 2.2991650 ± 0.015, 8222 wrong\n"), glued("3.4471588")]
    assert approximate(run, ref) == ref


def test_a_number_out_of_tolerance_leaves_the_output_to_fail():
    ref = [stream("loss 2.30\n")]
    run = [stream("loss 2.50\n")]
    assert approximate(run, ref) == run


def test_a_different_word_still_fails():
    ref = [stream("greedy 99.3%, beam fixes 0\n")]
    run = [stream("greedy 99.3%, beam breaks 0\n")]
    assert approximate(run, ref) != ref


def test_a_missing_number_fails():
    ref = [stream("accuracy 0.91 0.93\n")]
    run = [stream("accuracy 0.91\n")]
    assert approximate(run, ref) == run


def test_numbers_are_paired_across_outputs_split_differently():
    ref = [stream("a 1.000 "), stream("b 2.000\n")]
    run = [stream("a 1.001 b 2.001\n")]
    assert [o["text"] for o in approximate(run, ref)] == ["a 1.000 b 2.000\n"]


def test_the_stored_outputs_are_not_modified():
    ref = [glued("3.4471400")]
    run = [glued("3.4471588")]
    approximate(run, ref)
    assert run == [glued("3.4471588")]


def test_digits_inside_names_are_not_numbers():
    assert root_conftest.NUMBER.findall("ch13 d_model=96 x2 -1.5e-3 .5") == ["96", "-1.5e-3", ".5"]


@pytest.mark.parametrize("capability, second", [("AVX512", "avx2"), ("AVX512_BF16", "avx2"),
                                                ("AVX2", "default"), ("DEFAULT", "default")])
def test_the_second_kernel_set_differs_from_the_first(capability, second):
    assert root_conftest.second_kernel_set(capability)["ATEN_CPU_CAPABILITY"] == second


@pytest.mark.parametrize("native, recorded", [("AVX512", "AVX2"), ("AVX2", "AVX512_BF16"),
                                              ("DEFAULT", "AVX2")])
def test_a_machine_whose_kernels_differ_from_the_recording_checks_under_its_own(native, recorded):
    assert root_conftest.check_kernels(native, recorded) == {}


@pytest.mark.parametrize("native, recorded, check", [("AVX2", "AVX2", "default"),
                                                     ("AVX512_VNNI", "AVX512", "avx2")])
def test_a_machine_like_the_recording_one_checks_under_the_next_kernels_down(native, recorded, check):
    assert root_conftest.check_kernels(native, recorded)["ATEN_CPU_CAPABILITY"] == check


def _notebook(source: str, stored: str, tags=(), metadata=None) -> dict:
    return {"cells": [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {"tags": list(tags)},
                       "outputs": [{"name": "stdout", "output_type": "stream", "text": stored + "\n"}],
                       "source": [source]}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         **(metadata or {})},
            "nbformat": 4, "nbformat_minor": 5}


PLAIN = {"mha_course": {"record_kernels": "plain"}}


def test_a_notebook_recorded_under_plain_code_is_checked_under_the_machines_own_kernels(tmp_path):
    import json
    (tmp_path / "tools").mkdir()
    (tmp_path / "plain.ipynb").write_text(json.dumps(_notebook("1", "1", metadata=PLAIN)))
    (tmp_path / "vector.ipynb").write_text(json.dumps(_notebook("1", "1")))
    assert root_conftest.records_under_plain_kernels(tmp_path / "plain.ipynb")
    assert not root_conftest.records_under_plain_kernels(tmp_path / "vector.ipynb")
    assert root_conftest.recorded_capability(tmp_path / "plain.ipynb") == "DEFAULT"
    assert root_conftest.recording_kernels(tmp_path / "plain.ipynb")["ATEN_CPU_CAPABILITY"] == "default"
    assert root_conftest.recording_kernels(tmp_path / "vector.ipynb") == {}
    assert root_conftest.check_kernels("AVX2", "DEFAULT") == {}


@pytest.mark.slow
def test_nbval_other_kernels_runs_both_editions_under_kernels_other_than_the_recording_and_reads_the_approx_tag(tmp_path):
    """End to end, as `make notebooks` runs nbval (on the English notebooks; on the Chinese ones
    by hand), on a machine like the one that recorded the outputs: the English and the Chinese
    notebook's kernels both run the next kernel set down,
    those of a notebook recorded under plain code the machine's own; a training cell's number 1%
    off passes under `nbval-approx`."""
    import json
    import subprocess
    import sys
    (tmp_path / "zh").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    native = root_conftest.native_capability()
    (tmp_path / "tools" / "recorded_kernels.json").write_text(json.dumps({"cpu_capability": native}))
    capability = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    check = root_conftest.second_kernel_set(native)["ATEN_CPU_CAPABILITY"].upper()
    plain_check = root_conftest.check_kernels(native, "DEFAULT").get("ATEN_CPU_CAPABILITY", native).upper()
    notebooks = {"x.ipynb": _notebook(capability, check),
                 "zh/x.ipynb": _notebook(capability, check),
                 "trains.ipynb": _notebook(capability, plain_check, metadata=PLAIN),
                 "zh/trains.ipynb": _notebook(capability, plain_check, metadata=PLAIN),
                 "loss.ipynb": _notebook("print('loss 2.2991650')", "loss 2.2991765", ["nbval-approx"])}
    for name, nb in notebooks.items():
        (tmp_path / name).write_text(json.dumps(nb))
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p",
                           "no:cacheprovider", "--other-kernels", *notebooks],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_notebook_whose_runs_others_load_starts_first_then_the_longest(tmp_path):
    import json

    def timed(seconds: int, metadata=None) -> dict:
        nb = _notebook("1", "1", metadata=metadata)
        nb["cells"][0]["metadata"]["execution"] = {
            "iopub.execute_input": "2026-01-01T00:00:00Z", "shell.execute_reply": f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"}
        return nb
    (tmp_path / "zh").mkdir()
    notebooks = {"short.ipynb": timed(10), "long.ipynb": timed(300),
                 "loaded.ipynb": timed(200, {"mha_course": {"others_load_its_runs": True}}),
                 "zh/long.ipynb": timed(300)}
    for name, nb in notebooks.items():
        (tmp_path / name).write_text(json.dumps(nb))
    order = sorted(notebooks, key=lambda name: root_conftest.notebook_order(tmp_path / name, tmp_path))
    assert order == ["loaded.ipynb", "long.ipynb", "short.ipynb", "zh/long.ipynb"]


def test_a_chapter_that_loads_chapter_11s_model_is_recorded_under_its_kernels():
    """Chapter 11's model is cached under the kernels it was trained with: a chapter recorded
    under other kernels would train it again, and its page would show another model."""
    import json

    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    lender = ROOT / "chapters" / "11_language_model.ipynb"
    assert root_conftest.others_load_its_runs(lender)
    loaders = [p for p in chapters if p != lender and any(
        "trained_lm(" in "".join(cell["source"])
        for cell in json.loads(p.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "code")]
    assert loaders, "no chapter loads chapter 11's model any more: this test has nothing to check"
    wrong = [p.name for p in loaders if root_conftest.records_under_plain_kernels(p)
             != root_conftest.records_under_plain_kernels(lender)]
    assert not wrong, f"recorded under other kernels than chapter 11, whose model they load: {wrong}"
