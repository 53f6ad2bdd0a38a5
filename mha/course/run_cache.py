"""Expensive runs (training) computed once per machine and kept on disk.

:func:`cached` takes a name, a dict of everything the result depends on (the *key*) and a
function that computes the result. The first call computes it and writes it to
``$MHA_COURSE_CACHE`` (default ``~/.cache/mha-course``) as ``<name>-<hash of the key>.pt``;
every later call with an equal key, in this process or another one, loads that file instead.
A changed key (other settings, other data, other code) is another file: it is computed
afresh, never answered with a stale result.

* Two processes asking at once (nbval's two workers running the English and the Chinese
  copy of a chapter) compute once: a lock file per key makes the second wait for the first
  and then load its result.
* The file is written under another name and renamed into place, so nobody ever reads half
  a file.
* A result is a dict of tensors, numbers, strings, lists and dicts (read back with
  ``torch.load(weights_only=True)``: loading runs no code). A run records its own wall and
  CPU seconds in it, so a chapter that loads a run reports the time the run took.
* Training is deterministic on one machine (one thread, fixed seeds), so a loaded result is
  the result a new run would give there. What makes runs differ between machines or
  versions is in the key (:func:`environment`: torch version, threads, deterministic mode,
  and the CPU kernels PyTorch dispatches to: AVX-512, AVX2 or plain code round sums
  differently, so a run computed under one kernel set is never loaded under another).
* Where the cache folder cannot be written (a read-only sandbox), the result is computed and
  not kept.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

import torch
from filelock import FileLock

PACKAGE = Path(__file__).resolve().parent.parent  # the folder of `mha`


def cache_dir() -> Path:
    """``$MHA_COURSE_CACHE``, else ``~/.cache/mha-course``."""
    return Path(os.environ.get("MHA_COURSE_CACHE", Path.home() / ".cache" / "mha-course"))


def tensor_digest(tensor: torch.Tensor) -> str:
    """sha256 of a tensor's dtype, shape and values (for a key: data, initial weights)."""
    t = tensor.detach().cpu().contiguous()
    h = hashlib.sha256(f"{t.dtype} {list(t.shape)}".encode())
    h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def code_digest(*files: Path | str) -> str:
    """sha256 of the text of the given source files and of the model code every run uses:
    the top-level modules of ``mha`` (attention, norms, positions, GPT, ...)."""
    paths = sorted(PACKAGE.glob("*.py")) + [Path(f) for f in files]
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def environment() -> dict:
    """What changes a run's numbers between machines and settings, for every key."""
    return {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "deterministic": torch.are_deterministic_algorithms_enabled(),
            "cpu_kernels": torch.backends.cpu.get_cpu_capability(),
            "mkl_instructions": os.environ.get("MKL_ENABLE_INSTRUCTIONS", "")}


def key_digest(key: dict) -> str:
    """The short hash naming a key's file. Tensors in the key count by their values."""
    def plain(value):
        if isinstance(value, torch.Tensor):
            return "tensor:" + tensor_digest(value)
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(f"a cache key holds JSON values and tensors; {type(value).__name__} "
                        f"is neither: put its repr() or a digest in the key instead")

    text = json.dumps(plain({**key, "environment": environment()}), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached(name: str, key: dict, compute: Callable[[], dict], refresh: bool = False) -> dict:
    """``compute()``'s result for ``key``: loaded from the cache if there, else computed and
    stored (``refresh=True`` computes and overwrites). ``name`` starts the file's name."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"name {name!r}: use letters, digits, '-' and '_' (it starts a file name)")
    path = cache_dir() / f"{name}-{key_digest(key)}.pt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")))
        lock.acquire()
    except OSError:  # a read-only place (a sandbox): compute, keep nothing
        return compute()
    try:
        if path.exists() and not refresh:
            return torch.load(path, weights_only=True)
        result = compute()
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            torch.save(result, partial)
            partial.replace(path)  # atomic: a reader without the lock never sees half a file
        except OSError:
            partial.unlink(missing_ok=True)
        return result
    finally:
        lock.release()
