"""One device rule for the whole course, and the precision options of the training loops.

:func:`pick_device` chooses where tensors live:

1. the ``device`` argument, if one is given (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``);
2. else the environment variable ``MHA_DEVICE`` (same spellings, or ``auto`` for step 3);
3. else the fastest device present: ``cuda``, then ``mps`` (Apple GPUs), then ``cpu``.

A device that is named but absent is an error, never a silent fall-back to the CPU: a
learner who asked for a GPU should learn that they are not using one.

The book's stored outputs are CPU outputs: the Makefile hides GPUs
(``CUDA_VISIBLE_DEVICES=``), so ``make test`` runs every notebook on the CPU.

:func:`mixed_precision` turns a ``precision`` name (``"fp32"``, ``"bf16"``, ``"fp16"``) into
the three things a training step needs: an autocast context for the forward pass, the
backward pass (scaled for fp16) and the optimiser step (unscale, clip, step).
"""
from __future__ import annotations

import contextlib
import os

import torch

KINDS = ("cpu", "cuda", "mps")  # the device types the course knows
PRECISIONS = ("fp32", "bf16", "fp16")


def mps_available() -> bool:
    """Whether an Apple GPU (Metal Performance Shaders) can be used by this PyTorch."""
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """The device types usable here, CPU last: e.g. ``["cuda", "cpu"]`` or ``["cpu"]``."""
    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    if mps_available():
        found.append("mps")
    return found + ["cpu"]


def _checked(name, source: str) -> torch.device:
    """``name`` as a torch.device, or a ValueError/RuntimeError that says what to do."""
    text = str(name).strip()
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        device = None
    if device is None or device.type not in KINDS:
        raise ValueError(f"{source}={text!r} is not a device this course knows: use one of "
                         "'cpu', 'cuda', 'cuda:N' or 'mps'"
                         + (" (or 'auto' to pick the fastest present)" if source == "MHA_DEVICE" else ""))
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"{source}={text!r} but no CUDA device is visible (torch "
                               f"{torch.__version__}, CUDA_VISIBLE_DEVICES="
                               f"{os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')!r}); "
                               "use 'cpu', or install a CUDA build of PyTorch")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise RuntimeError(f"{source}={text!r} but only {count} CUDA device(s) are "
                               f"visible: use cuda:0 .. cuda:{count - 1}")
    if device.type == "mps" and not mps_available():
        raise RuntimeError(f"{source}={text!r} but no Apple GPU (MPS) is available: MPS needs "
                           "macOS 12.3+ on Apple silicon and a PyTorch built with MPS; use 'cpu'")
    return device


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """The device to compute on: ``device`` if given, else ``$MHA_DEVICE``, else the
    fastest present (cuda, then mps, then cpu).

    >>> pick_device("cpu")
    device(type='cpu')

    Raises ``ValueError`` for a name that is not a device (``"gpu"``) and ``RuntimeError``
    for a device that is absent (``MHA_DEVICE=cuda`` on a machine without CUDA).
    """
    if device is not None:
        return _checked(device, "device")
    env = os.environ.get("MHA_DEVICE", "").strip()
    if env and env.lower() != "auto":
        return _checked(env, "MHA_DEVICE")
    return torch.device(available_devices()[0])


# ----------------------------------------------------------------------------------------
# Mixed precision
# ----------------------------------------------------------------------------------------

class MixedPrecision:
    """How one training step runs in a given ``precision`` on a given device.

    * ``fp32``: plain float32 everywhere (the book's setting);
    * ``bf16``: the forward pass under ``torch.autocast(dtype=torch.bfloat16)``: matrix
      products run in bfloat16, the cross-entropy loss in float32 (which other ops stay
      float32 depends on the device: on CUDA softmax and layer norm do, on the CPU not).
      The weights and their gradients stay float32, so no gradient scaling is needed
      (bfloat16 has float32's exponent range). CPU and CUDA.
    * ``fp16``: autocast to float16, whose range is small (largest ~65504, smallest normal
      ~6e-5): small gradients would underflow to zero, so the loss is multiplied by a
      large factor before ``backward`` and the gradients divided by it before the step
      (``torch.amp.GradScaler``; steps whose gradients overflowed are skipped). CUDA only.

    Use::

        amp = MixedPrecision(device, "bf16")
        with amp.autocast():
            loss = model.loss(batch)
        amp.backward(loss)
        amp.step(optimizer, model.parameters(), max_norm=1.0)
    """

    def __init__(self, device: torch.device, precision: str = "fp32"):
        if precision not in PRECISIONS:
            raise ValueError(f"precision={precision!r}: use one of {', '.join(map(repr, PRECISIONS))}")
        device = torch.device(device)
        if precision == "bf16" and device.type not in ("cpu", "cuda"):
            raise ValueError(f"precision='bf16' runs on cpu or cuda, not {device.type}: "
                             "use precision='fp32' there")
        if precision == "fp16" and device.type != "cuda":
            raise ValueError(f"precision='fp16' needs a CUDA device (its gradient scaler is "
                             f"CUDA-only here), not {device.type}: on the CPU use "
                             "precision='bf16', elsewhere 'fp32'")
        self.device, self.precision = device, precision
        self.dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
        self.scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None

    def autocast(self):
        """The context for the forward pass and the loss (does nothing in fp32)."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        """``loss.backward()``, with the loss scaled up first in fp16."""
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self, optimizer: torch.optim.Optimizer, parameters, max_norm: float | None = 1.0) -> None:
        """Clip the gradients' global norm to ``max_norm`` (None = no clipping), then step.

        In fp16 the gradients are unscaled before clipping, so ``max_norm`` means the same
        in every precision, and the step is skipped if any gradient is inf/NaN.
        """
        if self.scaler:
            self.scaler.unscale_(optimizer)
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(parameters, max_norm)
        if self.scaler:
            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            optimizer.step()


def maybe_compile(module, compile: bool):
    """``torch.compile(module)`` if ``compile`` else ``module`` unchanged.

    The compiled module shares its parameters with ``module`` (training one trains the
    other); the first calls are slow (tracing and C++ code generation, ~50 s on a small CPU).
    """
    return torch.compile(module) if compile else module
