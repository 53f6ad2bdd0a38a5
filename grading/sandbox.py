"""Run a student's notebook in a bubblewrap sandbox and call into it from the grader.

The grader (this process, trusted) never runs student code. It starts
``grading/sandbox_child.py`` with bubblewrap and asks it, over two pipes, to run the notebook's
cells and then to call the student's functions on the grader's inputs. The tests (otter's
``tests/qN.py``) run here, in the grader: each of the student's names is bound to a ``Remote``
proxy, so ``split_heads(x, 2)`` inside a test sends ``x`` to the sandbox, runs the student's
``split_heads`` there and brings the result back as data, which the grader's check helpers
compare with the expected values. Patching the check helpers or otter inside the notebook
changes the sandbox's copies only.

What crosses the boundary (``grading.sandbox_child.encode``): None, bools, numbers, strings,
dense tensors, lists, tuples, dicts, sizes, dtypes. From the sandbox the grader reads them with
``torch.load(weights_only=True)`` (no pickle of arbitrary objects) and refuses anything else;
other objects stay where they are and cross as numbered handles (a student's module instance is
a ``Remote`` here; a reference function of the grader handed to the student's code is a
``GraderObject`` there, and calling it runs it here). The grader's own objects that are plain
data or picklable modules (``torch.nn.Linear``, ``mha.LayerNorm``) are sent as copies.

The sandbox (``bwrap_command``): a new mount namespace that holds only the system directories,
the Python installation, the virtualenv and the ``mha`` package, all read-only, and an empty
``/tmp`` of its own (its working directory; size-limited); no network, its own PID, IPC and UTS
namespaces, a new session, an unprivileged user id of its own (61000 + n, no capabilities);
resource limits (address space, processes, CPU seconds, file size). Per-request time limits are enforced from
here: first SIGINT (the student's code sees KeyboardInterrupt), then SIGKILL of the sandbox's
PID 1, which ends every process in it.
"""
from __future__ import annotations

import builtins
import io
import itertools
import json
import keyword
import linecache
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

from grading.sandbox_child import FRAME, MAX_REPLY, decode, dumps, encode, text

CHILD = Path(__file__).resolve().with_name("sandbox_child.py")
ROOT = Path(__file__).resolve().parent.parent
INSIDE_CHILD = "/opt/mha-grader/sandbox_child.py"  # where the child script is seen inside
FIRST_UID = 61000  # each sandbox runs as its own unprivileged user (61000, 61001, ...): the
UIDS = 1000        # process limit is per user, so a fork bomb cannot starve the other sandboxes
_UID_COUNTER = itertools.count()
_LIVE: set = set()  # sandboxes running now (``kill_all`` ends them when the grader is stopped)
_LIVE_LOCK = threading.Lock()
GRACE = 5.0  # seconds between SIGINT and SIGKILL (a traceback takes a while on a busy machine)
LOG_BYTES = 64_000  # bytes of the notebook's output kept for the log
MAX_NAMES = 100_000  # names of executed functions kept from one recorded call


class SandboxError(Exception):
    """The sandbox could not run the request (it died, was stopped, or sent garbage)."""


class SubmissionTimeout(SandboxError):
    """The whole submission's time is up."""


def kill_all(why: str = "the grader was stopped") -> None:
    """Kill every running sandbox (SIGTERM / Ctrl-C of the grader; SIGKILL of the grader is
    covered by bubblewrap's ``--die-with-parent``)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for sandbox in live:
        sandbox.kill(why)


@dataclass
class Limits:
    cell: float = 60.0  # seconds per notebook cell
    setup: float = 180.0  # seconds per cell above the first question (imports, busy machine)
    call: float = 20.0  # seconds per call of the student's code from a test
    start: float = 120.0  # seconds for the sandbox to start (Python + torch on a busy machine)
    memory: int = 4 * 2**30  # bytes of address space per process
    processes: int = 512  # processes and threads of the sandbox user
    scratch: int = 64 * 2**20  # bytes of /tmp and of any file written
    cpu: int = 900  # CPU seconds per process


def bwrap_available() -> bool:
    return all(shutil.which(tool) for tool in ("bwrap", "setpriv", "prlimit"))


SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")


def readable_roots() -> list[Path]:
    """What the sandbox sees (read-only): the interpreter, the virtualenv, the ``mha`` package,
    at their resolved paths (a ``.venv`` that is a symlink to ``/opt/course-venv`` is bound at
    ``/opt/course-venv``; ``venv_links`` recreates the link inside)."""
    import mha

    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
             Path(sys.exec_prefix).resolve(), Path(mha.__file__).resolve().parent}
    return sorted(p for p in paths if not any(str(p).startswith(s + "/") for s in SYSTEM))


def venv_links() -> dict[Path, Path]:
    """Symlinked installation folders as seen unresolved ({link: resolved target}): the
    interpreter reports ``sys.prefix`` through the link, and ``.pth`` files may name it."""
    links = {}
    for prefix in {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}:
        prefix = Path(os.path.abspath(prefix))
        if prefix != prefix.resolve() and not any(str(prefix).startswith(s + "/")
                                                  for s in SYSTEM):
            links[prefix] = prefix.resolve()
    return links


def mha_file() -> str:
    import mha

    return mha.__file__


def sandbox_python() -> str:
    """The virtualenv's interpreter at its resolved folder (what the sandbox can see)."""
    return str(Path(sys.prefix).resolve() / "bin" / "python")


def bwrap_command(limits: Limits, info_fd: int, args: list[str], uid: int,
                  seccomp_fd: int | None = None) -> list[str]:
    """prlimit (limits) -> bwrap (namespaces, read-only binds) -> setpriv (as root: an
    unprivileged user of the sandbox's own, no capabilities) -> the command.

    bubblewrap's own init stays PID 1 of the sandbox (no ``--as-pid-1``): the command's
    parent-death signal is cleared when setpriv changes its user, bubblewrap's is not, so
    ``--die-with-parent`` ends the whole PID namespace when the grader dies, even by SIGKILL.
    No user namespace can be made inside: a seccomp filter (``seccomp_filter``) refuses
    ``unshare``/``clone`` with ``CLONE_NEWUSER`` (bubblewrap's ``--disable-userns`` needs
    ``--unshare-user``, which as root maps the sandbox's user to root outside, and an
    unprivileged bubblewrap cannot reach an interpreter under ``/root``); an unprivileged
    grader gets ``--unshare-user --disable-userns`` as well."""
    cmd = ["prlimit", f"--as={limits.memory}", f"--nproc={limits.processes}",
           f"--cpu={limits.cpu}", f"--fsize={limits.scratch}", "--core=0", "--",
           "bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
           # /tmp first: a checkout or virtualenv that lives under /tmp (a CI clone) is then
           # bound on top of the empty scratch /tmp below, instead of being hidden by it.
           "--proc", "/proc", "--dev", "/dev",
           "--perms", "1777", "--size", str(limits.scratch), "--tmpfs", "/tmp"]
    for link in ("bin", "sbin", "lib", "lib64"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target:
            cmd += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            cmd += ["--ro-bind", f"/{link}", f"/{link}"]
    made = set()
    for root in readable_roots():
        for parent in reversed(root.parents[:-1]):  # /work, /work/main, ...: make them traversable
            if parent not in made and str(parent) not in ("/usr", "/etc", "/tmp"):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--ro-bind", str(root), str(root)]
    for link, target in venv_links().items():
        for parent in reversed(link.parents[:-1]):
            if parent not in made and str(parent) not in ("/usr", "/etc", "/tmp") \
                    and not any(parent == r or r in parent.parents for r in readable_roots()):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--symlink", str(target), str(link)]
    cmd += ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/mha-grader",
            "--ro-bind", str(CHILD), INSIDE_CHILD,
            # the grader's own copy of mha, first on the sandbox's path (an exported grader's
            # copy is not the one the virtualenv's editable install points to)
            "--perms", "0755", "--dir", "/opt/mha-grader/lib",
            "--ro-bind", str(Path(mha_file()).resolve().parent), "/opt/mha-grader/lib/mha",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--die-with-parent",
            "--info-fd", str(info_fd), "--chdir", "/tmp", "--clearenv",
            "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/bin:/bin",
            "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "MKL_NUM_THREADS", "1",
            "--setenv", "MPLBACKEND", "Agg", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            "--setenv", "PYTHONHASHSEED", "0"]
    if seccomp_fd is not None:
        cmd[cmd.index("--unshare-pid"):cmd.index("--unshare-pid")] = ["--seccomp", str(seccomp_fd)]
    if os.geteuid() == 0:  # drop to an unprivileged user without capabilities, inside
        cmd += ["--", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    else:  # an unprivileged user: bwrap's own user namespace, none further inside
        cmd[cmd.index("--unshare-pid"):cmd.index("--unshare-pid")] = ["--unshare-user",
                                                                      "--disable-userns"]
        cmd += ["--"]
    return cmd + args


# Classic BPF for seccomp (linux/filter.h, linux/seccomp.h, linux/audit.h).
_LD_W_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_CLONE_NEWUSER = 0x10000000
_SIGCHLD = 17  # the same on x86_64 and aarch64
# architecture: (audit arch, unshare, clone, clone3, rt_sigaction)
_ARCHES = {"x86_64": (0xC000003E, 272, 56, 435, 13), "aarch64": (0xC00000B7, 97, 220, 435, 134)}


def seccomp_filter(machine: str | None = None) -> bytes:
    """A seccomp program (``struct sock_filter[]``) that lets everything through except:

    * making a user namespace: ``unshare``/``clone`` with ``CLONE_NEWUSER`` get EPERM, ``clone3``
      (whose flags a filter cannot read) gets ENOSYS, so that the C library falls back to
      ``clone``;
    * changing what SIGCHLD does (``rt_sigaction(SIGCHLD, new action)``: EPERM; reading it is
      allowed). A process that ignores SIGCHLD has its children reaped by the kernel, and the
      CPU time of a child reaped that way is added to no process: the capstone's CPU budget
      (``Sandbox.cpu_time``) would not see work done in such children. A filter cannot read
      the new action, so every change is refused, a handler included.

    On x86_64 the x32 system calls are refused. Empty for an unknown architecture."""
    import errno
    import platform
    import struct

    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return b""
    audit, unshare, clone, clone3, sigaction = arch
    op = lambda code, k, jt=0, jf=0: struct.pack("=HBBI", code, jt, jf, k)  # noqa: E731
    # jt/jf are relative: the target's index minus (this instruction's index + 1)
    program = [
        op(_LD_W_ABS, 4),                        # 0: seccomp_data.arch
        op(_JEQ, audit, 1, 0),                   # 1: our architecture? -> 3
        op(_RET, _ERRNO | errno.EPERM),          # 2: another ABI: refuse
        op(_LD_W_ABS, 0),                        # 3: seccomp_data.nr
        op(_JEQ, unshare, 5, 0),                 # 4: -> 10
        op(_JEQ, clone, 4, 0),                   # 5: -> 10
        op(_JEQ, clone3, 2, 0),                  # 6: -> 9
        op(_JEQ, sigaction, 6, 0),               # 7: -> 14
        op(_RET, _ALLOW),                        # 8
        op(_RET, _ERRNO | errno.ENOSYS),         # 9: clone3
        op(_LD_W_ABS, 16),                       # 10: args[0], low 32 bits (little-endian)
        op(_JSET, _CLONE_NEWUSER, 0, 1),         # 11: CLONE_NEWUSER? -> 12 else -> 13
        op(_RET, _ERRNO | errno.EPERM),          # 12
        op(_RET, _ALLOW),                        # 13
        op(_LD_W_ABS, 16),                       # 14: rt_sigaction's signal
        op(_JEQ, _SIGCHLD, 0, 4),                # 15: SIGCHLD? -> 16 else -> 20
        op(_LD_W_ABS, 24),                       # 16: its new action, low 32 bits
        op(_JEQ, 0, 0, 3),                       # 17: NULL so far? -> 18 else -> 21
        op(_LD_W_ABS, 28),                       # 18: high 32 bits
        op(_JEQ, 0, 0, 1),                       # 19: NULL (only reads)? -> 20 else -> 21
        op(_RET, _ALLOW),                        # 20
        op(_RET, _ERRNO | errno.EPERM),          # 21: a new action for SIGCHLD
    ]
    if arch[0] == 0xC000003E:  # x86_64: refuse the x32 ABI (nr with bit 30 set)
        program[3:4] = [op(_LD_W_ABS, 0), op(0x35, 0x40000000, 0, 1),  # JGE
                        op(_RET, _ERRNO | errno.EPERM)]
        # the jumps after the insertion point are relative: unchanged
    return b"".join(program)


# ----------------------------------------------------------------------------- remote objects

_BUILTIN_ERRORS = {name: cls for name, cls in vars(builtins).items()
                   if isinstance(cls, type) and issubclass(cls, Exception)}
_ERROR_CLASSES: dict[str, type] = {}
_ERROR_LOCK = threading.Lock()


class StudentError(Exception):
    """An exception raised by the student's code in the sandbox (its type name is kept)."""


def student_exception(error) -> Exception:
    """An exception of the grader's own making that reads like the student's one."""
    if not isinstance(error, dict):
        return SandboxError("the sandbox sent a malformed error")
    name, message = error.get("type"), error.get("message")
    name = name if isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) \
        else "Error"
    message = text(message if isinstance(message, str) else "")
    cls = _BUILTIN_ERRORS.get(name)
    if cls is not None:
        try:
            exc = cls(message)
            if str(exc) == message:
                return exc
        except Exception:
            pass
    with _ERROR_LOCK:
        cls = _ERROR_CLASSES.setdefault(name, type(name, (StudentError,), {}))
    return cls(message)


class Remote:
    """An object of the student's that lives in the sandbox: calling it, or reading one of its
    attributes, is a request to the sandbox. Comparisons and other operators are not forwarded."""

    __slots__ = ("_sandbox", "_generation", "_id", "_meta")

    def __init__(self, sandbox: "Sandbox", number: int, meta: dict):
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "_generation", sandbox.generation)
        object.__setattr__(self, "_id", number)
        object.__setattr__(self, "_meta", meta)

    def __call__(self, *args, **kwargs):
        try:
            return self._sandbox.call(self, args, kwargs)
        except Exception as exc:
            _raise_from_notebook(exc)

    def __getattr__(self, name: str):
        if name == "__name__":
            meta = self._meta
            return meta.get("name") or meta.get("type") or "object"
        if name == "__wrapped__":  # lets inspect.getsource(remote) read the student's source
            return self._sandbox.source_code(self)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            return self._sandbox.getattr(self, name)
        except Exception as exc:
            _raise_from_notebook(exc)

    def __setattr__(self, name, value):
        raise AttributeError("the grader does not change the student's objects")

    def recorded_call(self, *args, **kwargs):
        """``(the call's value, the names of the library functions the student's code executed
        during the call)``, as the sandbox recorded them (``mha.course.checks`` asks when a
        question bans something: its bans are decided by behaviour)."""
        try:
            return self._sandbox.call(self, args, kwargs, record=True)
        except Exception as exc:
            _raise_from_notebook(exc)

    def changed_in_place(self) -> list:
        """Which tensor arguments this object's last call changed in place (positions; names
        for keyword arguments). Arguments cross as copies, so the grader's own tensors never
        change: a test asks here (``getattr(fn, "changed_in_place", None)``; in the notebook,
        where ``fn`` is the function itself, it compares the caller's tensor instead)."""
        return self._sandbox.changed_in_place(self)

    def notebook_defines(self, name: str) -> bool:
        """Whether ``name``, as this function of the notebook reads it, is a function or class
        the notebook defines (the student's own helper; ``mha.course.checks.forbid`` asks)."""
        return self._sandbox.defines(self, name)

    def sandbox_cpu_seconds(self) -> float:
        """CPU seconds used so far by every process of the sandbox this object lives in, as
        the kernel counts them (the capstone's training budget: ``mha.course.capstone``)."""
        return self._sandbox.cpu_time()

    def notebook_module(self):
        """The object's ``__module__`` in the sandbox: ``__main__`` for what the notebook's
        cells define, a library's name for what they import (``mha.course.checks.forbid``
        asks; the proxy's own ``__module__`` is this file's)."""
        return self._sandbox.getattr(self, "__module__")

    def __bool__(self):
        return True

    def __repr__(self):
        return f"<{self._meta.get('type', 'object')} from the notebook>"


_FRAME_COUNTER = itertools.count()


def _raise_from_notebook(exc: Exception):
    """Raise ``exc`` from a frame that stands for the student's code: the check helpers then
    report the student's line (``where``, sent by the sandbox) and never a line of the grader."""
    where = getattr(exc, "where", None) or {}
    name = where.get("function") if isinstance(where.get("function"), str) else ""
    name = name if name.isidentifier() and not keyword.iskeyword(name) else "notebook_code"
    line = where.get("line") if isinstance(where.get("line"), str) else ""
    filename = f"<notebook code {next(_FRAME_COUNTER)}>"
    linecache.cache[filename] = (1, None, [f"# {name}\n", line.replace("\n", " ") + "\n"],
                                 filename)
    namespace: dict = {"__name__": "__main__"}  # the notebook's module: "your code" (checks)
    exec(compile(f"def {name}(exc):\n    raise exc\n", filename, "exec"), namespace)
    namespace[name](exc)  # the linecache entry stays: the helpers read the line later


class Namespace:
    """The notebook's namespace, as tests see it (``env``; otter reads the student's names
    from it). ``connect()`` gives a live sandbox (starting it again if it was stopped)."""

    def __init__(self, connect):
        self._connect = connect

    def get(self, name: str, default=None):
        sandbox = self._connect()
        reply = sandbox.request({"op": "get", "name": str(name)}, sandbox.limits.call)
        return reply.get("value") if reply.get("found") is True else default

    def __getitem__(self, name: str):
        missing = object()
        value = self.get(name, missing)
        if value is missing:
            raise KeyError(name)
        return value

    def __contains__(self, name) -> bool:
        missing = object()
        return self.get(name, missing) is not missing

    def __setitem__(self, name: str, value) -> None:
        sandbox = self._connect()
        if isinstance(value, Remote) and value._generation != sandbox.generation:
            return  # restoring a name after the sandbox was restarted: it ran the notebook anew
        sandbox.request({"op": "set", "name": str(name), "value": value}, sandbox.limits.call)

    def update(self, values=(), **more) -> None:
        for name, value in dict(values, **more).items():
            self[name] = value

    def pop(self, name: str, default=None):
        value = self.get(name, default)
        sandbox = self._connect()
        sandbox.request({"op": "delete", "name": str(name)}, sandbox.limits.call)
        return value

    def __delitem__(self, name: str) -> None:
        self.pop(name)


# ----------------------------------------------------------------------------- the sandbox

_SOURCE_COUNTER = itertools.count()


class Sandbox:
    """One sandboxed process. ``start()`` it, ``request()`` things, ``kill()`` it."""

    def __init__(self, limits: Limits, deadline: float, generation: int = 0):
        self.limits, self.deadline, self.generation = limits, deadline, generation
        self.proc: subprocess.Popen | None = None
        self.child_pid: int | None = None  # bubblewrap's init: PID 1 of the sandbox
        self.python_pid: int | None = None  # the notebook's process (gets the SIGINTs)
        self.alive = False
        self.death: str | None = None  # why the sandbox is gone
        self.cpu_seconds = 0.0  # CPU time of the sandbox's processes, read when it is killed
        self.output_bytes = 0
        self.output_log = bytearray()
        self._buffer = bytearray()
        self._exported: dict[int, object] = {}
        self._exported_ids: dict[int, int] = {}
        self._changed: dict[int, list] = {}  # handle -> what its last call changed in place

    # ------------------------------------------------------------------ process
    def start(self) -> None:
        info_r, info_w = os.pipe()
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        out_r, out_w = os.pipe()
        fds = [info_w, req_r, rep_w, out_w]
        program = seccomp_filter()
        seccomp_r = None
        if program:
            seccomp_r, seccomp_w = os.pipe()
            os.write(seccomp_w, program)  # a few hundred bytes: fits in the pipe
            os.close(seccomp_w)
            fds.append(seccomp_r)
        python = sandbox_python()
        uid = FIRST_UID + next(_UID_COUNTER) % UIDS
        cmd = bwrap_command(self.limits, info_w,
                            [python, "-I", INSIDE_CHILD, str(req_r), str(rep_w)], uid,
                            seccomp_fd=seccomp_r)
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out_w,
                                         stderr=out_w, pass_fds=tuple(fds[:3] + fds[4:]),
                                         start_new_session=True, close_fds=True)
        finally:
            for fd in fds:
                os.close(fd)
        self._req, self._rep = req_w, rep_r
        os.set_blocking(rep_r, False)
        self._drain = threading.Thread(target=self._drain_output, args=(out_r,), daemon=True)
        self._drain.start()
        self.alive = True
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            info = self._read_info(info_r, time.monotonic() + self.limits.start)
            self.child_pid = int(info["child-pid"])
            ready = self._receive(self.limits.start)
            if not isinstance(ready, dict) or ready.get("ready") is not True:
                raise SandboxError("the sandbox did not start: " + self.log_tail())
            children = _children(self.child_pid)
            self.python_pid = children[0] if children else None
        except BaseException:
            self.kill("did not start")
            raise

    def _read_info(self, fd: int, deadline: float) -> dict:
        data = b""
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise SandboxError("bubblewrap did not start in time")
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                data += chunk
                try:
                    return json.loads(data)
                except ValueError:
                    continue
        finally:
            os.close(fd)
        raise SandboxError("bubblewrap did not start: " + self.log_tail())

    def _drain_output(self, fd: int) -> None:
        """Read (and mostly discard) everything the notebook prints."""
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                chunk = pipe.read(1 << 16)
                if not chunk:
                    return
                self.output_bytes += len(chunk)
                if len(self.output_log) < LOG_BYTES:
                    self.output_log += chunk[: LOG_BYTES - len(self.output_log)]

    def cpu_time(self) -> float:
        """User + system CPU seconds of every process in the sandbox (and of the children
        they waited for), read from the kernel, not from the sandbox."""
        if not self.child_pid:
            return 0.0
        return sum(_cpu_seconds(pid) for pid in [self.child_pid, *_descendants(self.child_pid)])

    def log_tail(self) -> str:
        return bytes(self.output_log[-3000:]).decode("utf-8", "replace")

    def interrupt(self) -> None:
        if self.alive and self.python_pid and self.proc.poll() is None:
            try:
                os.kill(self.python_pid, signal.SIGINT)
            except OSError:
                pass

    def kill(self, why: str) -> None:
        """Stop every process of the sandbox (killing its PID 1 ends the PID namespace)."""
        if self.proc is None:
            return
        if self.alive:
            self.death = why
        self.alive = False
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self.proc.poll() is None:
            self.cpu_seconds = _cpu_seconds(self.python_pid)
            for pid in (self.child_pid, None):
                try:
                    if pid:
                        os.kill(pid, signal.SIGKILL)
                    else:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for fd in ("_req", "_rep"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)

    # ------------------------------------------------------------------ messages
    def _send(self, message: dict, timeout: float | None = None) -> None:
        """Write one message; past ``timeout`` (default: the start-up time) without the sandbox
        reading it, the sandbox is killed: a write to a pipe nobody reads never blocks us."""
        payload = dumps(encode(message, self._leaf))
        data = memoryview(FRAME.pack(len(payload)) + payload)
        end = time.monotonic() + (self.limits.start if timeout is None else timeout)
        try:
            os.set_blocking(self._req, False)
            while data:
                left = end - time.monotonic()
                if left <= 0:
                    self.kill("stopped reading requests")
                    raise SandboxError("the notebook's process stopped reading the grader's "
                                       "requests (the grader stopped it)")
                _, ready, _ = select.select([], [self._req], [], left)
                if ready:
                    try:
                        data = data[os.write(self._req, data):]
                    except BlockingIOError:
                        continue
        except (OSError, TypeError, ValueError) as exc:
            self.kill("stopped reading requests")
            raise SandboxError(f"the sandbox process is gone ({self.death})") from exc

    def _receive(self, timeout: float) -> dict | None:
        """The next message, or None when ``timeout`` seconds pass first."""
        import torch

        end = time.monotonic() + timeout
        while True:
            if len(self._buffer) >= FRAME.size:
                (size,) = FRAME.unpack(self._buffer[: FRAME.size])
                if size > MAX_REPLY:
                    self.kill("sent a message too large")
                    raise SandboxError(f"the sandbox sent more than {MAX_REPLY >> 20} MB at once")
                if len(self._buffer) >= FRAME.size + size:
                    payload = bytes(self._buffer[FRAME.size: FRAME.size + size])
                    del self._buffer[: FRAME.size + size]
                    try:
                        _check_archive(payload)
                        tree = torch.load(io.BytesIO(payload), weights_only=True)
                        message = decode(tree, self._node)
                        if not isinstance(message, dict):
                            raise ValueError("not a message")
                        return message
                    except Exception as exc:
                        self.kill("sent a malformed message")
                        raise SandboxError(f"the sandbox sent a malformed message "
                                           f"({type(exc).__name__})") from None
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._rep], [], [], left)
            if not ready:
                return None
            try:
                chunk = os.read(self._rep, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                code = self.proc.poll() if self.proc else None
                if code is None:
                    try:
                        code = self.proc.wait(timeout=2)
                    except subprocess.TimeoutExpired:
                        code = "?"
                self.kill(_exit_reason(code))
                raise SandboxError(f"the notebook's process ended ({self.death})")
            self._buffer += chunk

    def request(self, message: dict, timeout: float, *, interrupt: bool = True) -> dict:
        """Send a request; serve the sandbox's callbacks until its reply comes.

        Past ``timeout`` (or the submission's deadline) the student's code is interrupted
        (SIGINT); if no reply comes within ``GRACE`` seconds the sandbox is killed and
        ``TimeoutError`` (or ``SubmissionTimeout``) raised. A reply that comes after the
        interrupt is returned with ``timed_out`` set."""
        if not self.alive:
            raise SandboxError(f"the notebook's process is gone ({self.death})")
        now = time.monotonic()
        overall = self.deadline - now
        if overall <= 0:
            self.kill("the submission's time limit was reached")
            raise SubmissionTimeout("the time limit of the whole submission was reached")
        whole = overall < timeout
        end = now + min(timeout, overall)
        self._send(message, max(GRACE, end - now))
        try:
            return self._wait(end, timeout, whole, interrupt)
        except BaseException:
            if self.alive:  # e.g. an alarm of the check helpers: the reply would come late
                self.kill("the grader stopped waiting")
            raise

    def _wait(self, end: float, timeout: float, whole: bool, interrupt: bool) -> dict:
        interrupted = None
        while True:
            now = time.monotonic()
            limit = (interrupted + GRACE) if interrupted else end
            if now >= limit:
                if interrupted is None and interrupt:
                    self.interrupt()
                    interrupted = now
                    continue
                self.kill("ran out of time")
                if whole:
                    raise SubmissionTimeout("the time limit of the whole submission was reached")
                raise TimeoutError(f"did not finish within {timeout:g} s (the grader stopped "
                                   f"it). Is there an infinite loop?")
            reply = self._receive(limit - now)
            if reply is None:
                continue
            if reply.get("reply") is True:
                if interrupted is not None:
                    reply["timed_out"] = True
                return reply
            if reply.get("op") == "callback":
                self._callback(reply)
                continue
            self.kill("broke the protocol")
            raise SandboxError("the sandbox sent an unexpected message")

    def _callback(self, message: dict) -> None:
        """Run one of the grader's functions for the student's code (a reference)."""
        target = self._exported.get(message.get("id"))
        args, kwargs = message.get("args"), message.get("kwargs")
        try:
            if target is None or not isinstance(args, list) or not isinstance(kwargs, dict) \
                    or not all(isinstance(k, str) for k in kwargs):
                raise ValueError("malformed callback")
            reply = {"reply": True, "value": target(*args, **kwargs)}
        except Exception as exc:
            reply = {"reply": True, "error": {"type": type(exc).__name__,
                                              "message": text(str(exc), 300)}}
        try:
            self._send(reply, self.limits.call)
        except SandboxError:
            raise
        except Exception as exc:  # the reference returned something that cannot cross
            self._send({"reply": True, "error": {"type": type(exc).__name__,
                                                 "message": text(str(exc), 300)}},
                       self.limits.call)

    def _leaf(self, obj) -> dict:
        """The grader's objects, on their way to the sandbox."""
        import torch

        if isinstance(obj, Remote):
            if obj._sandbox is not self or obj._generation != self.generation:
                raise SandboxError("an object of the notebook's earlier run (before the "
                                   "grader stopped and restarted it) is gone")
            return {"~": "handle", "id": obj._id}
        function = isinstance(obj, (types.FunctionType, types.BuiltinFunctionType,
                                    types.MethodType)) or (callable(obj) and not isinstance(
                                        obj, (type, torch.nn.Module)))
        if not function:
            try:
                pickle.dumps(obj)
                return {"~": "object", "v": obj}
            except Exception:
                if not callable(obj):
                    raise TypeError(f"cannot send a {type(obj).__name__} to the sandbox")
        number = self._exported_ids.get(id(obj))
        if number is None:
            number = len(self._exported) + 1
            self._exported[number], self._exported_ids[id(obj)] = obj, number
        return {"~": "grader", "id": number, "name": getattr(obj, "__name__", None)}

    def _node(self, tree: dict):
        """Tagged values from the sandbox: handles of its objects, or ours sent back."""
        tag = tree.get("~")
        if tag == "handle" and type(tree.get("id")) is int:
            meta = {"type": text(tree.get("type") or "object", 100),
                    "name": text(tree["name"], 100) if isinstance(tree.get("name"), str) else None,
                    "callable": tree.get("callable") is True}
            return Remote(self, tree["id"], meta)
        if tag == "grader" and tree.get("id") in self._exported:
            return self._exported[tree["id"]]
        raise ValueError(f"unexpected tag {tag!r}")

    # ------------------------------------------------------------------ operations
    def _check(self, remote: Remote) -> None:
        if remote._sandbox is not self or remote._generation != self.generation or not self.alive:
            raise SandboxError("this object belonged to a run of the notebook that the grader "
                               f"stopped ({self.death or 'restarted'}); it is gone")

    def call(self, remote: Remote, args, kwargs, record: bool = False):
        """The value of the call; with ``record``, also the set of library functions it executed."""
        self._check(remote)
        reply = self.request({"op": "call", "target": remote, "args": list(args),
                              "kwargs": dict(kwargs), "record": record}, self.limits.call)
        changed = reply.get("changed") if isinstance(reply.get("changed"), list) else []
        self._changed[remote._id] = [key for key in changed[:MAX_NAMES] if type(key) in (int, str)]
        value = self._value(reply)
        if not record:
            return value
        names = reply.get("executed")
        names = names if isinstance(names, list) else []
        return value, {name for name in names[:MAX_NAMES] if isinstance(name, str) and len(name) <= 300}

    def changed_in_place(self, remote: Remote) -> list:
        """Positions (names of keyword arguments) of the tensor arguments that ``remote``'s
        last call changed in place, as the sandbox reports them."""
        self._check(remote)
        return list(self._changed.get(remote._id, []))

    def defines(self, remote: Remote, name: str) -> bool:
        self._check(remote)
        reply = self.request({"op": "defines", "target": remote, "name": str(name)}, self.limits.call)
        return self._value(reply) is True

    def getattr(self, remote: Remote, name: str):
        self._check(remote)
        reply = self.request({"op": "getattr", "target": remote, "name": name}, self.limits.call)
        return self._value(reply)

    def _value(self, reply: dict):
        if reply.get("timed_out"):
            raise TimeoutError(f"did not finish within {self.limits.call:g} s (the grader "
                               f"interrupted it). Is there an infinite loop?")
        if "error" in reply:
            exc = student_exception(reply["error"])
            error = reply["error"]
            exc.where = error.get("where") if isinstance(error, dict) else None
            raise exc
        return reply.get("value")

    def source_code(self, remote: Remote):
        """A code object whose source (registered in linecache) is the student's function:
        what ``inspect.getsource`` needs to read it."""
        self._check(remote)
        reply = self.request({"op": "source", "target": remote}, self.limits.call)
        source = reply.get("value")
        if not isinstance(source, str) or not source.strip():
            raise AttributeError("__wrapped__")
        filename = f"<notebook source {next(_SOURCE_COUNTER)}>"
        lines = [line + "\n" for line in source.splitlines()]
        linecache.cache[filename] = (len(source), None, lines, filename)
        return compile("pass", filename, "exec")


def _check_archive(payload: bytes) -> None:
    """A reply is a ``torch.save`` zip archive: refuse one whose records are compressed or
    add up to more than the reply itself (a zip bomb), before torch reads it."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        records = archive.infolist()
        if len(records) > 100_000:
            raise ValueError("too many records")
        total = 0
        for record in records:
            if record.compress_type != zipfile.ZIP_STORED or record.file_size != \
                    record.compress_size:
                raise ValueError("a compressed record")
            total += record.file_size
        if total > len(payload):
            raise ValueError("records larger than the archive")


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid``."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        pass
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return sorted(found)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of a process and of its children it waited for."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return 0.0


def _exit_reason(code) -> str:
    if isinstance(code, int) and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (" (memory limit?)" if name == "SIGKILL" else "")
    if isinstance(code, int) and code > 128 and code - 128 < 65:
        try:
            return f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            pass
    return f"exited with status {code}"


PREFLIGHT_CELL = "import torch, mha\npreflight = float(torch.ones(3).sum())"


def preflight(limits: Limits) -> str | None:
    """Run a known-good notebook cell in a sandbox, as every student's notebook will be run.
    None when it works, else why not and what to do (the grader then grades nobody, rather
    than give a whole class zeros)."""
    sandbox = Sandbox(limits, time.monotonic() + limits.start + 60)
    try:
        sandbox.start()
        reply = sandbox.request({"op": "run", "source": PREFLIGHT_CELL}, limits.start)
        if reply.get("error"):
            raise SandboxError(f"the cell raised {reply['error']}")
        value = Namespace(lambda: sandbox).get("preflight")
        if value != 3.0:
            raise SandboxError(f"the cell computed {value!r} instead of 3.0")
        return None
    except Exception as exc:
        fixes = ["bubblewrap, setpriv and prlimit must run here (`make grading-deps`; as a "
                 "normal user, unprivileged user namespaces must be enabled)",
                 f"the interpreter {sandbox_python()} and the folders "
                 f"{', '.join(map(str, readable_roots()))} are what the sandbox sees (a "
                 f"symlinked virtualenv is bound at its resolved path)",
                 f"--memory-limit ({limits.memory >> 20} MB of address space) must leave room "
                 f"for Python and torch (2048 or more)"]
        return (f"{type(exc).__name__}: {exc}. What to check: " + "; ".join(fixes) + ". Output "
                f"of the sandbox: {sandbox.log_tail()[-1500:] or '(none)'}")
    finally:
        sandbox.kill("preflight done")
