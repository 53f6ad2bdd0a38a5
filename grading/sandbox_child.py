"""The process that runs one student's notebook, inside the sandbox (see ``grading/sandbox.py``).

``grading.sandbox`` starts this file with bubblewrap (``bwrap``): no network, a read-only view of
the Python installation and of the ``mha`` package only, a small ``/tmp`` of its own, an
unprivileged user. It talks to the grader over two pipes (file descriptors given on the
command line) and does what the grader asks, one request at a time:

* ``run``: execute one notebook cell (IPython, as in Jupyter) and say whether it raised;
* ``get`` / ``set`` / ``delete``: read or change a name of the notebook's namespace;
* ``call`` / ``getattr`` / ``source``: call one of the student's objects, read an attribute,
  give the source code of a function. A ``call`` with ``record`` also sends back the library
  functions the student's code executed (``mha.course.checks.recording``, the recorder of the
  notebook's own checks): the grader's bans are decided by behaviour, as in the notebook;
* ``defines``: whether a name that a function of the student's reads is a function or class of
  the notebook (the student's own helper, which a ban by name lets through).

Values cross the boundary as a tree of plain values, tensors and tagged dicts (``encode``);
objects that are not plain data stay on their side and cross as numbered handles (a student's
function or module stays here, the grader's reference functions stay with the grader, and a call
of a handle is a further request, in either direction).

Nothing in this process is trusted once a cell has run: the student's code can replace anything
here. The grader therefore reads what comes back only as data (``torch.load(weights_only=True)``)
and compares it with its own expectations in its own process.

The wire format (``FRAME``, ``encode``/``decode``, ``dumps``) is shared with ``grading.sandbox``.
"""
from __future__ import annotations

import io
import os
import signal
import struct
import sys
import types

FRAME = struct.Struct("!Q")  # each message: its length, then a torch.save payload
MAX_FRAME = 256 * 2**20  # bytes; a larger message is refused (by both sides)
# What the grader accepts from the sandbox, counted BEFORE anything is materialised (a zero-stride
# ``expand`` tensor, a pickle whose memo repeats one string a million times, a zip whose records
# are compressed): bytes of one reply, and of everything that reply decodes to.
MAX_REPLY = 64 * 2**20
MAX_DECODED = 64 * 2**20  # bytes of tensor data + characters of strings + 8 per item
MAX_TEXT = 2_000  # characters kept of an error message or a name
MAX_DEPTH = 40  # nesting of lists / tuples / dicts in one value


# ----------------------------------------------------------------------------- frames

def write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(FRAME.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def read_exact(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def dumps(tree) -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save(tree, buffer)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- values

def tensor_arguments(args, kwargs, copy: bool = False) -> list:
    """``[(position or name, tensor)]`` of a call's tensor arguments, copied with ``copy``."""
    import torch

    named = [*enumerate(args), *kwargs.items()]
    return [(key, value.detach().clone() if copy else value) for key, value in named
            if isinstance(value, torch.Tensor)]


def changed_in_place(before: list, after: list) -> list:
    """The positions (names for keyword arguments) of the tensor arguments that the student's
    code changed in place: arguments cross as copies, so ``x[:, p] += 1`` changes only the
    sandbox's copy, and the grader learns of it from this list (``Remote.changed_in_place``)."""
    import torch

    changed = []
    for (key, old), (_, new) in zip(before, after):
        same = old.shape == new.shape and old.dtype == new.dtype and bool(
            (old == new).logical_or(old.isnan() & new.isnan() if old.is_floating_point()
                                    else old != old).all())
        if not same:
            changed.append(key)
    return changed


def encode(obj, leaf, depth: int = 0):
    """``obj`` as a tree of None, bool, int, float, str, plain tensors and tagged dicts.

    ``leaf(obj)`` gives the tagged dict of anything else (a handle, or a pickled object)."""
    import torch

    if depth > MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} levels deep")
    if obj is None or type(obj) in (bool, int, float, str):
        return obj
    if type(obj).__module__ == "numpy" and getattr(obj, "shape", None) == ():
        obj = obj.item()  # a numpy scalar (np.int64(6)) crosses as the number it holds
        if obj is None or type(obj) in (bool, int, float, str):
            return obj
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, int) and not isinstance(obj, torch.Tensor):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, torch.Tensor) and obj.layout == torch.strided and not obj.is_quantized:
        tensor = obj.detach()
        if type(tensor) is not torch.Tensor:
            tensor = tensor.as_subclass(torch.Tensor)
        return tensor.clone(memory_format=torch.contiguous_format)
    if isinstance(obj, torch.Size):
        return {"~": "size", "v": [int(s) for s in obj]}
    if isinstance(obj, torch.dtype):
        return {"~": "dtype", "v": str(obj).removeprefix("torch.")}
    if isinstance(obj, (tuple, list)):  # named tuples and list subclasses become plain ones
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {"~": kind, "v": [encode(x, leaf, depth + 1) for x in obj]}
    if isinstance(obj, dict):  # OrderedDict (a state_dict) included
        items = list(obj.items())
        return {"~": "dict", "k": [encode(k, leaf, depth + 1) for k, _ in items],
                "v": [encode(v, leaf, depth + 1) for _, v in items]}
    return leaf(obj)


class Budget:
    """How much a decoded message may hold (``MAX_DECODED``): every item, every character of a
    string and every byte of a tensor counts each time it appears, so that a payload that
    refers many times to one object cannot grow on the way in."""

    def __init__(self, limit: int = MAX_DECODED):
        self.left = limit

    def spend(self, amount: int) -> None:
        self.left -= amount
        if self.left < 0:
            raise ValueError(f"a message that holds more than {MAX_DECODED >> 20} MB")


def decode(tree, node, depth: int = 0, budget: Budget | None = None):
    """Inverse of ``encode``; ``node(tag)`` rebuilds the tagged dicts it does not know."""
    import torch

    budget = budget if budget is not None else Budget()
    if depth > MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} levels deep")
    budget.spend(8)
    if tree is None or type(tree) in (bool, int, float, str):
        if type(tree) is str:
            budget.spend(len(tree))
        elif type(tree) is int and abs(tree).bit_length() > 4096:
            raise ValueError("an integer too large")
        return tree
    if type(tree) is torch.Tensor:
        if tree.layout != torch.strided or tree.is_quantized:
            raise ValueError("only dense tensors may cross the sandbox boundary")
        size = tree.numel() * tree.element_size()
        # a tensor must own the bytes it shows: no zero or overlapping strides (``expand``)
        # whose "size" is many times its storage
        if (tree.storage_offset() * tree.element_size() + size > tree.untyped_storage().nbytes()
                or not tree.is_contiguous()):
            raise ValueError("a tensor whose storage is smaller than its size (expand, "
                             "as_strided): only dense, contiguous tensors may cross")
        budget.spend(size)
        return tree
    if type(tree) is not dict or not isinstance(tree.get("~"), str):
        raise ValueError(f"unexpected {type(tree).__name__} in a message")
    tag = tree["~"]
    if tag in ("tuple", "list"):
        items = [decode(x, node, depth + 1, budget) for x in _list(tree["v"])]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        keys, values = _list(tree["k"]), _list(tree["v"])
        if len(keys) != len(values):
            raise ValueError("a dict with more keys than values")
        return {decode(k, node, depth + 1, budget): decode(v, node, depth + 1, budget)
                for k, v in zip(keys, values)}
    if tag == "size":
        dims = _list(tree["v"])
        budget.spend(8 * len(dims))
        return torch.Size([int(s) for s in dims if type(s) is int and 0 <= s < 2**40])
    if tag == "dtype":
        dtype = getattr(torch, str(tree["v"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"unknown dtype {tree['v']!r}")
        return dtype
    return node(tree)


def _list(value) -> list:
    if type(value) is not list:
        raise ValueError("malformed message")
    return value


def text(value, limit: int = MAX_TEXT) -> str:
    value = value if isinstance(value, str) else repr(value)
    return value if len(value) <= limit else value[: limit - 3] + "..."


# ----------------------------------------------------------------------------- the child

class Child:
    """Serves the grader's requests; runs the student's code."""

    def __init__(self, rfd: int, wfd: int):
        self.rfd, self.wfd = rfd, wfd
        self.handles: dict[int, object] = {}
        self.by_id: dict[int, int] = {}
        self.student_running = False
        self.shell = None
        self.pid = os.getpid()

    # ------------------------------------------------------------------ messages
    def send(self, message: dict) -> None:
        write_frame(self.wfd, dumps(encode(message, self.leaf)))

    def receive(self) -> dict | None:
        import torch

        header = read_exact(self.rfd, FRAME.size)
        if header is None:
            return None
        (size,) = FRAME.unpack(header)
        if size > MAX_FRAME:
            raise ValueError("message too large")
        payload = read_exact(self.rfd, size)
        if payload is None:
            return None
        tree = torch.load(io.BytesIO(payload), weights_only=False)  # from the grader: trusted
        return decode(tree, self.node)

    def leaf(self, obj) -> dict:
        if isinstance(obj, GraderObject):
            return {"~": "grader", "id": obj._id}
        number = self.by_id.get(id(obj))
        if number is None or self.handles.get(number) is not obj:
            number = len(self.handles) + 1
            self.handles[number], self.by_id[id(obj)] = obj, number
        try:
            name = getattr(obj, "__name__", None)
        except Exception:
            name = None
        return {"~": "handle", "id": number, "type": text(type(obj).__name__, 100),
                "name": text(name, 100) if isinstance(name, str) else None,
                "callable": bool(callable(obj))}

    def node(self, tree: dict):
        tag = tree["~"]
        if tag == "handle":
            return self.handles[tree["id"]]
        if tag == "grader":
            return GraderObject(self, tree["id"], tree.get("name"))
        if tag == "object":
            return tree["v"]
        raise ValueError(f"unknown tag {tag!r}")

    # ------------------------------------------------------------------ requests
    def serve(self) -> None:
        while True:
            message = self.receive()
            if message is None:
                os._exit(0)
            self.answer(message)

    def send_reply(self, reply: dict) -> None:
        if os.getpid() != self.pid:  # a process the notebook forked came back here: it ends
            os._exit(0)
        self.send({"reply": True, **reply})

    def request(self, message: dict):
        """Ask the grader (a call of one of its reference functions); serve its requests
        until its reply comes."""
        self.send(message)
        while True:
            answer = self.receive()
            if answer is None:
                os._exit(0)
            if "reply" in answer:
                if "error" in answer:
                    raise RuntimeError(f"the grader's function raised {answer['error']['type']}: "
                                       f"{answer['error']['message']}")
                return answer["value"]
            self.answer(answer)

    def answer(self, message: dict) -> None:
        op = message.get("op")
        try:
            if op == "run":
                reply = self.run_cell(message["source"])
            elif op == "call":
                args, kwargs = message["args"], message["kwargs"]
                before = tensor_arguments(args, kwargs, copy=True)
                if message.get("record") is True:
                    reply = self.recorded_call(message["target"], args, kwargs)
                else:
                    reply = {"value": self.student(message["target"], *args, **kwargs)}
                reply["changed"] = changed_in_place(before, tensor_arguments(args, kwargs))
            elif op == "defines":
                from mha.course.checks.running import notebook_defines

                reply = {"value": bool(self.student(notebook_defines, message["target"],
                                                    message["name"]))}
            elif op == "getattr":
                reply = {"value": self.student(getattr, message["target"], message["name"])}
            elif op == "get":
                namespace = self.shell.user_ns
                found = message["name"] in namespace
                reply = {"found": found, "value": namespace.get(message["name"]) if found else None}
            elif op == "set":
                self.shell.user_ns[message["name"]] = message["value"]
                reply = {}
            elif op == "delete":
                self.shell.user_ns.pop(message["name"], None)
                reply = {}
            elif op == "source":
                reply = {"value": self.source(message["target"])}
            else:
                raise ValueError(f"unknown request {op!r}")
        except BaseException as exc:  # the student's code raised (or exited): report it
            reply = {"error": describe(exc)}
        try:
            self.send_reply(reply)
        except Exception as exc:  # the value cannot cross (too deep, ...): say why
            self.send_reply({"error": describe(exc)})

    def student(self, fn, *args, **kwargs):
        """Run the student's code: the grader's SIGINT may interrupt it."""
        self.student_running = True
        try:
            return fn(*args, **kwargs)
        finally:
            self.student_running = False

    def recorded_call(self, fn, args, kwargs) -> dict:
        """Call the student's ``fn`` and record the library functions its code executes (this
        file's own code, which also runs as ``__main__``, is not the student's)."""
        from mha.course.checks.running import recording

        with recording(not_learners=(__file__,)) as executed:
            value = self.student(fn, *args, **kwargs)
        return {"value": value, "executed": sorted(executed)}

    def run_cell(self, source: str) -> dict:
        self.student_running = True
        try:
            result = self.shell.run_cell(source, store_history=False)
        finally:
            self.student_running = False
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
        error = result.error_before_exec or result.error_in_exec
        return {"error": describe(error) if error is not None else None}

    def source(self, fn) -> str | None:
        import inspect

        try:
            return text(inspect.getsource(fn), 200_000)
        except Exception:
            return None

    def on_interrupt(self, signum, frame):
        if self.student_running:
            raise KeyboardInterrupt


class GraderObject:
    """One of the grader's functions (a reference implementation handed to the student's code):
    calling it asks the grader to run it."""

    def __init__(self, child: Child, number: int, name):
        self._child, self._id = child, number
        self.__name__ = name if isinstance(name, str) else "reference"

    def __call__(self, *args, **kwargs):
        return self._child.request({"op": "callback", "id": self._id, "args": list(args),
                                    "kwargs": kwargs})

    def __repr__(self):
        return f"<the grader's {self.__name__}>"


def describe(exc: BaseException) -> dict:
    """The error's type name, message (first line) and the student's line it came from: the
    deepest frame of the notebook's cells (code whose globals are the notebook's namespace),
    never this file's (which runs as ``__main__`` too) nor a library's."""
    import linecache
    import traceback

    message = str(exc).strip()
    where = None
    try:
        for frame, line_number in traceback.walk_tb(exc.__traceback__):
            if frame.f_globals.get("__name__") != "__main__" or \
                    frame.f_code.co_filename == __file__:
                continue
            line = linecache.getline(frame.f_code.co_filename, line_number, frame.f_globals)
            where = {"function": text(frame.f_code.co_name, 100), "line": text(line.strip(), 300)}
    except Exception:
        pass
    return {"type": text(type(exc).__name__, 100),
            "message": text(message.splitlines()[0] if message else ""), "where": where}


def install_otter_stub() -> None:
    """``import otter`` / ``grader.check(...)`` in the notebook do nothing here: the grader runs
    the tests itself, outside this process."""
    otter = types.ModuleType("otter")

    class Notebook:
        def __init__(self, *args, **kwargs):
            pass

        def check(self, *args, **kwargs):
            return None

        def check_all(self, *args, **kwargs):
            return None

        def export(self, *args, **kwargs):
            return None

    otter.Notebook = Notebook
    sys.modules["otter"] = otter


def main() -> None:
    rfd, wfd = int(sys.argv[1]), int(sys.argv[2])
    try:  # die with our parent (bwrap), whose own parent is the grader
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    sys.path.insert(0, "/opt/mha-grader/lib")  # the grader's copy of mha (grading.sandbox)
    child = Child(rfd, wfd)
    signal.signal(signal.SIGINT, child.on_interrupt)
    import torch  # noqa: F401  (imported before the first cell: the start-up is timed apart)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.xmode = "Plain"
    child.shell = InteractiveShell.instance(config=config)
    install_otter_stub()
    child.send({"ready": True, "pid": os.getpid()})
    child.serve()


if __name__ == "__main__":
    main()
