"""What crosses from the sandbox to the grader is bounded before it is materialised (issue 21).

The grader reads a reply as a ``torch.save`` archive (``torch.load(weights_only=True)``) and
decodes it (``grading.sandbox_child.decode``). A reply written by hostile code can be small on
the wire and huge once read: a zero-stride tensor, a pickle whose memo repeats one string, a
zip record that is compressed. Each must be refused with an error; fast, no sandbox.
"""
from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the grading package
from grading.sandbox import _check_archive
from grading.sandbox_child import MAX_DECODED, decode, dumps, encode


def received(payload: bytes):
    """What the grader does with a reply's payload (``Sandbox._receive``)."""
    _check_archive(payload)
    return decode(torch.load(io.BytesIO(payload), weights_only=True), node=None)


def leaf(obj):
    raise TypeError(type(obj).__name__)


def test_plain_values_and_tensors_cross_unchanged():
    value = {"reply": True, "value": [torch.arange(6.0).reshape(2, 3), "text", 3, 0.5, None]}
    got = received(dumps(encode(value, leaf)))
    assert got["reply"] is True and got["value"][1:] == ["text", 3, 0.5, None]
    torch.testing.assert_close(got["value"][0], torch.arange(6.0).reshape(2, 3))


def test_numpy_scalars_cross_as_python_numbers():
    assert encode(np.int64(6), leaf) == 6 and type(encode(np.int64(6), leaf)) is int
    assert type(encode(np.float32(0.5), leaf)) is float
    assert encode(np.bool_(True), leaf) is True


def test_a_zero_stride_tensor_is_refused():
    payload = dumps({"~": "list", "v": [torch.zeros(1).expand(2**33)]})  # 4 bytes claim 32 GB
    assert len(payload) < 10_000
    with pytest.raises(ValueError, match="storage is smaller"):
        received(payload)


def test_one_string_repeated_by_reference_is_counted_each_time():
    text = "x" * 2**20
    payload = dumps({"~": "list", "v": [text] * 100})  # the pickle memo stores the string once
    assert len(payload) < 2 * 2**20 and 100 * 2**20 > MAX_DECODED
    with pytest.raises(ValueError, match="more than"):
        received(payload)


def test_a_compressed_archive_is_refused_before_torch_reads_it():
    plain = dumps(torch.zeros(10))
    bomb = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(plain)) as src, zipfile.ZipFile(bomb, "w") as dst:
        for record in src.infolist():
            dst.writestr(record.filename, src.read(record), compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(ValueError, match="compressed"):
        received(bomb.getvalue())
