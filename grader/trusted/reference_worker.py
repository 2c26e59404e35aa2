"""The correct versions of earlier exercises, answering the student's code in a process of their own.

When a test declares `calls` (one mistake costs once, grader/trusted/trusted_tests.py), the student's code calls
the source notebook's functions back with inputs of its choosing: a few KB of shapes can ask for
gigabytes (an attention over two long, zero-width sequences) or hours. So those calls run here, in one
child process per grader process, never in the grader: its address space is held to the kernel's
memory limit (GradingLimits.memory_mb), and the grader stops waiting, and kills it, when the test
cell's deadline passes. It is started at the first such call and kept for later notebooks, each of
which gets a fresh namespace (its setup cell and answer cells, run again).

A correct version handed one of the student's objects (a function of theirs to score with) uses it
through the grader: each use is one message back to the parent, which asks the student's kernel
(grader.trusted.remote.Remote), and may meanwhile be asked to answer a nested call. The child and the parent
speak length-prefixed JSON (grader/trusted/wire.py trees), never pickles.
"""
import contextlib
import io
import json
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import time

from grader.limits import FIXED
from grader.trusted import wire
from grader.trusted.remote import Remote

HEADER = struct.Struct(">I")
# A message between the grader and the worker: a call-back's request or answer, with room for its envelope.
MAX_MESSAGE_BYTES = FIXED["reference_message_bytes"].value
START_SECONDS = FIXED["reference_start_seconds"].value


PR_SET_PDEATHSIG = 1


def _prctl():
    """Linux's prctl, looked up before any fork."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


class WorkerFailed(RuntimeError):
    """The worker ran out of time or memory, or died: what the student's call gets instead of an answer."""


def _send(stream, message: dict):
    data = json.dumps(message, separators=(",", ":")).encode()
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float) -> bytes:
    chunks, left = [], size
    while left:
        wait = None if deadline == float("inf") else deadline - time.monotonic()
        if (wait is not None and wait <= 0) or not select.select([fd], [], [], wait)[0]:
            raise TimeoutError("the test's time is up")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float) -> dict:
    size, = HEADER.unpack(_read_exactly(fd, HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise ValueError(f"a message of {size:,} bytes, above the limit of {MAX_MESSAGE_BYTES:,}")
    return wire.loads(_read_exactly(fd, size, deadline).decode(), MAX_MESSAGE_BYTES)


def _remote_info(value) -> dict:
    """How a Remote (an object in the student's kernel) crosses between the grader and the worker."""
    if isinstance(value, Remote):
        return {"ref": value._ref, "mro": value._mro, "is_type": value._is_type}
    raise TypeError(f"a correct version cannot take or give a {type(value).__name__} here")


# -- the parent's side ---------------------------------------------------------------------------------
_shared = {}  # memory limit -> this grader process's worker


def shared_worker(memory_mb: int) -> "ReferenceWorker":
    """The worker of this grader process (one per memory limit), kept between notebooks."""
    if memory_mb not in _shared:
        _shared[memory_mb] = ReferenceWorker(memory_mb)
    return _shared[memory_mb]


class ReferenceCall:
    """A correct version as the test holds it: called by the test itself, it runs here on the test's inputs;
    handed to the student's kernel and called back from there, it runs in the worker (`answer`)."""

    def __init__(self, function, name: str, token, sources: tuple, memory_mb: int):
        self.function, self.name, self.token, self.sources, self.memory_mb = function, name, token, sources, memory_mb
        self.__name__ = self.__qualname__ = name
        self.__doc__ = function.__doc__

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def answer(self, args: dict, kwargs: dict, deadline: float, bridge) -> dict:
        return shared_worker(self.memory_mb).call(self.token, self.sources, self.name, args, kwargs, deadline, bridge)


class ReferenceWorker:
    """The grader's handle on its worker process; `call` runs one correct version there."""

    def __init__(self, memory_mb: int):
        self.memory_mb = memory_mb
        self.process = None
        self.loaded = None  # the token of the namespace the worker holds

    def _start(self):
        limit = self.memory_mb * 2 ** 20

        prctl = _prctl()

        def limited():  # in the child between fork and exec: no imports (another thread may hold their lock)
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            if prctl is not None:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the grader, even in the middle of a call
        self.process = subprocess.Popen([sys.executable, "-m", "grader.trusted.reference_worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, preexec_fn=limited)
        self.loaded = None

    def close(self):
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait()
            self.process = None
            self.loaded = None

    def call(self, token, sources: tuple, name: str, args: dict, kwargs: dict, deadline: float, bridge) -> dict:
        """The answer tree ({"value": ...}) of the correct version `name` on the student's packed arguments,
        from the namespace of `sources` (setup cells, answer cells; `token` names it); uses of the student's
        objects go through `bridge`. Raises WorkerFailed past `deadline`, or when the worker dies."""
        try:
            if self.process is None or self.process.poll() is not None:
                self._start()
            if self.loaded != token:
                setup, references = sources
                _send(self.process.stdin, {"load": {"setup": list(setup), "references": list(references),
                                                    "cwd": os.getcwd()}})
                reply = self._serve(max(deadline, time.monotonic() + START_SECONDS), bridge)
                if "error" in reply:
                    raise WorkerFailed(f"the correct versions could not be made: {reply['error']}")
                self.loaded = token
            _send(self.process.stdin, {"call": name, "args": args, "kwargs": kwargs})
            return self._serve(deadline, bridge)
        except TimeoutError:
            self.close()
            raise WorkerFailed("the test's time is up (the correct version was still running on your inputs)") \
                from None
        except (EOFError, BrokenPipeError, ValueError) as error:
            died = self.process.poll() if self.process is not None else None
            self.close()
            raise WorkerFailed(
                f"the correct version stopped on your inputs ({'exit ' + str(died) if died is not None else error})"
                f": past its memory limit of {self.memory_mb:,} MB, or a crash") from None

    def _serve(self, deadline: float, bridge) -> dict:
        """Read until the worker's answer; meanwhile carry out what it asks of the student's kernel."""
        fd = self.process.stdout.fileno()
        while True:
            message = _receive(fd, deadline)
            if "request" not in message:
                return message
            request = message["request"]
            try:
                value = bridge.request(str(request["op"]), *bridge.unpack(request["args"]))
                answer = {"value": wire.pack(value, _remote_info)}
            except Exception as error:  # noqa: BLE001 (the correct version sees the failure as it would here)
                answer = {"error": f"{type(error).__name__}: {error}"[:2000]}
            _send(self.process.stdin, {"answer": answer})


# -- the worker's side ---------------------------------------------------------------------------------
class _Parent:
    """What a Remote in the worker asks through: the grader, which asks the student's kernel."""

    def __init__(self, worker):
        self.worker = worker

    def request(self, op, *args):
        _send(self.worker.output, {"request": {"op": op, "args": wire.pack(list(args), _remote_info)}})
        reply = self.worker.next_answer()
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return wire.unpack(reply["value"], self.worker.remote)


class _Worker:
    def __init__(self, input_fd: int, output):
        self.input_fd, self.output = input_fd, output
        self.namespace = {}
        self.parent = _Parent(self)

    def remote(self, tree):
        if "ref" not in tree:
            raise ValueError("unexpected value in a call")
        return Remote(self.parent, tree)

    def next_answer(self) -> dict:
        """The grader's answer to a request; calls it makes meanwhile (nested call-backs) are served first."""
        while True:
            message = _receive(self.input_fd, float("inf"))
            if "answer" in message:
                return message["answer"]
            self.handle(message)

    def handle(self, message: dict):
        if "load" in message:
            reply = self._load(message["load"])
        elif "call" in message:
            reply = self._call(message)
        else:
            reply = {"error": "unknown message"}
        _send(self.output, reply)

    def _load(self, load: dict) -> dict:
        from grader.trusted.trusted_tests import run_quietly
        try:
            os.chdir(load["cwd"])
            namespace = {"__name__": "__main__"}
            run_quietly(load["setup"], "setup cell", namespace)
            run_quietly(load["references"], "correct answer", namespace)
        except Exception as error:  # noqa: BLE001
            return {"error": f"{type(error).__name__}: {error}"[:2000]}
        self.namespace = namespace
        return {"loaded": True}

    def _call(self, message: dict) -> dict:
        from grader.trusted.bridge import is_keras_object, keras_copy

        def other(value):
            if isinstance(value, Remote):
                return {"ref": value._ref}
            if is_keras_object(value):
                config, weights = keras_copy(value)
                return {"keras": config, "weights": wire.pack(weights, other)}
            raise TypeError(f"a correct version cannot send a {type(value).__name__} to your kernel")
        try:
            function = self.namespace.get(message["call"])
            if not callable(function):
                raise LookupError(f"no correct version of {message['call']!r}")
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                value = function(*wire.unpack(message["args"], self.remote),
                                 **wire.unpack(message["kwargs"], self.remote))
            return {"value": wire.pack(value, other)}
        except MemoryError:
            limit = resource.getrlimit(resource.RLIMIT_AS)[0]
            return {"error": "MemoryError: the correct version ran out of memory on your inputs (its limit is "
                             f"{limit // 2 ** 20:,} MB)" if limit > 0 else "MemoryError"}
        except Exception as error:  # noqa: BLE001 (the student's code sees a RuntimeError)
            return {"error": f"{type(error).__name__}: {error}"[:2000]}


def main():
    output = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what the notebooks' code prints never reaches the protocol
    worker = _Worker(0, output)
    while True:
        try:
            message = _receive(0, float("inf"))
        except EOFError:
            return
        worker.handle(message)


if __name__ == "__main__":
    main()
