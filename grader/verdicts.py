"""Verdicts decided outside student code: the test cells run in the grader, never in the student's kernel.

While a notebook is graded, the student's (sandboxed) kernel runs the setup, answer and other
cells. Each test cell runs here instead, in a namespace of its own: the setup cell's names are the
grader's own (NumPy, the course's checks, the data), and every other name the test reads (the
graded functions, the student's variables) is a `Remote`, a stand-in that asks the kernel's agent
(grader/kernel_agent.py) for one thing at a time and gets plain data back (grader/wire.py). So
the student's interpreter sees the inputs of each call and nothing else: no test code, no expected
value, no hidden test. Whatever it answers, the checks, the references and the verdict are computed
here, and the test cell's outputs (what nbgrader scores) are written here.
"""
import ast
import builtins
import contextlib
import io
import json
import operator
import os
import sys
import time
import traceback
import uuid
from pathlib import Path

import numpy as np
import zmq
from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode

from attention_course import kernel_side
from grader import wire
from grader.kernel_agent import CALLBACK_PROMPT

AGENT_MODULE = "_attention_course_grading_agent"
AGENT_SOURCE = (Path(__file__).with_name("wire.py").read_text() + "\n"
                + Path(__file__).with_name("kernel_agent.py").read_text())
# A reply from the student's kernel larger than this (characters plus array bytes) is refused.
MAX_REPLY_CHARACTERS = 64 * 2 ** 20
# Student output kept per test cell.
MAX_STUDENT_OUTPUT = 20_000
# Packages whose classes a Remote may claim to be an instance of (for isinstance checks in tests);
# only modules the grader has already imported are used, nothing is imported on the kernel's word.
LIBRARY_PACKAGES = ("keras", "tensorflow", "numpy")
PLAIN_DUNDERS = {"__name__", "__qualname__", "__module__", "__doc__"}


def mark_stderr(text: str) -> str:
    """Error-stream text kept as plain output: each line marked, so it informs without failing the cell."""
    return "".join(f"[stderr] {line}" for line in str(text).splitlines(True))


def install_agent_code() -> str:
    """Code that makes the agent a module in the kernel (run once per kernel start)."""
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({AGENT_MODULE!r})\n"
            f"exec(compile({AGENT_SOURCE!r}, {AGENT_MODULE!r}, 'exec'), _m.__dict__)\n"
            f"_s.modules[{AGENT_MODULE!r}] = _m\ndel _s, _t, _m")


class StudentCodeError(Exception):
    """An exception the student's code raised; its class is named after the student's exception."""


def student_error(info: dict) -> Exception:
    base = getattr(builtins, str(info.get("builtin")), Exception)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    name = str(info.get("name", "Error"))[:80] or "Error"
    kind = type(name, (StudentCodeError, base), {"__module__": "student"})
    trace = str(info.get("traceback", "")).strip()
    return kind(f"{info.get('message', '')}\n--- raised in your code ---\n{trace}" if trace else info.get("message", ""))


class Remote:
    """An object that lives in the student's kernel: every use is one request to its agent.

    What it answers is data (numbers, arrays, strings) that the test then checks here. Decisions are
    never asked of the student's object: a Remote is truthy like any object and equal only to itself,
    so an object whose __eq__ or __bool__ always says yes passes nothing.
    """

    __slots__ = ("_bridge", "_ref", "_mro", "_is_type", "__weakref__")

    def __init__(self, bridge, info):
        object.__setattr__(self, "_bridge", bridge)
        object.__setattr__(self, "_ref", int(info["ref"]))
        object.__setattr__(self, "_mro", [tuple(map(str, pair)) for pair in info.get("mro", [])][:30])
        object.__setattr__(self, "_is_type", bool(info.get("is_type")))

    def _ask(self, op, *args):
        return self._bridge.request(op, *args)

    @property
    def __class__(self):
        return _library_class(self._mro) or Remote

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name not in PLAIN_DUNDERS:
            raise AttributeError(name)
        return self._ask("getattr", self, name)

    def __setattr__(self, name, value):
        self._ask("setattr", self, name, value)

    def __call__(self, *args, **kwargs):
        return self._ask("call", self, list(args), kwargs)

    def __getitem__(self, key):
        return self._ask("getitem", self, key)

    def __setitem__(self, key, value):
        self._ask("setitem", self, key, value)

    def __len__(self):
        return self._ask("len", self)

    def __iter__(self):
        return iter(self._ask("items", self))

    def __contains__(self, item):
        return self._ask("contains", self, item)

    def __bool__(self):
        return True  # never asked of the student's object (see the class docstring)

    def __int__(self):
        return int(self._ask("int", self))

    def __float__(self):
        return float(self._ask("float", self))

    def __index__(self):
        return operator.index(self._ask("index", self))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._ask("array", self), dtype=dtype)

    def __repr__(self):
        return str(self._ask("repr", self))

    def __str__(self):
        return str(self._ask("str", self))

    def __format__(self, spec):
        return str(self._ask("format", self, spec))

    def __hash__(self):
        return hash(("remote", self._ref))

    def __instancecheck__(self, instance):
        return isinstance(instance, Remote) and bool(self._ask("isinstance", instance, self))

    def __subclasscheck__(self, other):
        return isinstance(other, Remote) and bool(self._ask("issubclass", other, self))


def _library_class(mro):
    for module, qualname in mro:
        if module.split(".")[0] in LIBRARY_PACKAGES and module in sys.modules:
            found = sys.modules[module]
            for part in qualname.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type):
                return found
    return None


def is_keras_object(value) -> bool:
    keras = sys.modules.get("keras")
    return keras is not None and isinstance(value, (keras.layers.Layer, keras.Model))


def keras_copy(value) -> tuple:
    """A Keras layer or model of the test, sent by value: its config and weights."""
    import keras
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(value),
                                   default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
    return config, [np.asarray(w) for w in value.get_weights()]


class KernelBridge:
    """Requests to the agent in one kernel, over the Jupyter protocol (execute, comm, input)."""

    def __init__(self, client, is_alive, interrupt, output):
        self.client = client  # a started BlockingKernelClient
        self.is_alive = is_alive  # () -> bool
        self.interrupt = interrupt  # () -> None
        self.output = output  # (text) -> None: the student's printed output, for the test cell
        self.deadline = None
        self._proxies = {}
        self._callbacks = []
        self._reply_buffers = []
        self._requests, self._comm_id = 0, None
        self._channels = {"iopub": client.iopub_channel, "stdin": client.stdin_channel, "shell": client.shell_channel}
        self._poller = None

    # -- values going in and out -----------------------------------------------------------
    def _send(self, value):
        if isinstance(value, Remote):
            return {"ref": value._ref}
        if is_keras_object(value):
            config, weights = keras_copy(value)
            return {"keras": config, "weights": wire.pack(weights, self._send)}
        if getattr(value, "__attention_course_helper__", False):
            return {"helper": [value.__module__, value.__name__]}
        if callable(value):
            self._callbacks.append(value)
            return {"callback": len(self._callbacks) - 1}
        raise TypeError(f"a test cannot send a {type(value).__name__} to the student's kernel")

    def _receive(self, tree):
        if "ref" not in tree:
            raise ValueError("unexpected value from the student's kernel")
        ref = int(tree["ref"])
        if ref not in self._proxies:
            self._proxies[ref] = Remote(self, tree)
        return self._proxies[ref]

    def pack(self, value):
        return wire.pack(value, self._send)

    def unpack(self, tree):
        return wire.unpack(tree, self._receive)

    # -- one request -----------------------------------------------------------------------
    def request(self, op, *args):
        buffers = []
        text = wire.dumps({"op": op, "args": wire.pack(list(args), self._send, buffers), "errstate": np.geterr()})
        self._requests += 1
        request_id = str(self._requests)
        if self._comm_id is None:  # one comm for all requests, opened after the agent registered its target
            self._comm_id = uuid.uuid4().hex
            self._send_shell("comm_open", {"comm_id": self._comm_id, "target_name": wire.REQUEST_TARGET, "data": {}})
        self._send_shell("comm_msg", {"comm_id": self._comm_id, "data": {"id": request_id, "request": text}}, buffers)
        reply = self._execute(f"__import__('sys').modules[{AGENT_MODULE!r}].serve({request_id!r})")
        if "error" in reply:
            raise student_error(reply["error"])
        if op == "call":
            _, call_args, call_kwargs = args
            for where, tree in reply.get("changed", [])[:100]:
                original = call_kwargs.get(where) if isinstance(where, str) else \
                    call_args[where] if isinstance(where, int) and 0 <= where < len(call_args) else None
                update_in_place(original, self.unpack(tree))
        return wire.unpack(reply["value"], self._receive, self._reply_buffers)

    def _send_shell(self, kind: str, content: dict, buffers=None):
        self.client.session.send(self.client.shell_channel.socket, kind, content, buffers=buffers)

    def run_code(self, code: str, timeout: float):
        """Run grader code in the kernel (the agent's installation); its output is dropped."""
        self.deadline = time.monotonic() + timeout
        try:
            self._execute(code, expect_reply=False)
        finally:
            self.deadline = None

    def close(self):
        self.client.stop_channels()

    def _execute(self, code: str, expect_reply: bool = True) -> dict:
        msg_id = self.client.execute(code, silent=False, store_history=False, allow_stdin=True)
        reply, idle, quiet_since = None, False, time.monotonic()
        while not idle:
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.interrupt()
                self._drain(msg_id)
                raise TimeoutError("the test cell ran out of time while your code was running "
                                   "(an endless loop, or far too slow)")
            message = self._next_message()
            if message is None:
                if time.monotonic() - quiet_since > 1.0:
                    if not self.is_alive():
                        raise DeadKernelError("the kernel died while running your code")
                    quiet_since = time.monotonic()
                continue
            quiet_since = time.monotonic()
            channel, message = message
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if channel == "stdin" and kind == "input_request":
                self.client.input(self._answer_callback(content.get("prompt", "")))
            elif kind == "stream":
                self._student_output(content.get("name"), content.get("text", ""))
            elif kind == "comm_open" and content.get("target_name") == wire.REPLY_TARGET:
                buffers = list(message.get("buffers") or [])
                size = sum(memoryview(b).nbytes for b in buffers)
                if size > MAX_REPLY_CHARACTERS:
                    raise ValueError(f"your code's answer is {size:,} bytes, above the grader's limit of "
                                     f"{MAX_REPLY_CHARACTERS:,}")
                reply = wire.loads(str(content.get("data", {}).get("reply", "")), MAX_REPLY_CHARACTERS)
                self._reply_buffers = buffers
            elif kind == "error":
                reply = {"error": {"name": content.get("ename", "Error"), "builtin": "Exception",
                                   "message": content.get("evalue", "")}}
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
        if expect_reply and not isinstance(reply, dict):
            raise StudentCodeError("the student's kernel gave no answer (was the grader's agent replaced?)")
        return reply or {}

    def _next_message(self, wait_ms: int = 200):
        """(channel, message) from whichever of iopub, stdin and shell has one, waiting up to `wait_ms`."""
        if self._poller is None:
            self._poller = zmq.Poller()
            for channel in self._channels.values():
                self._poller.register(channel.socket, zmq.POLLIN)
        ready = dict(self._poller.poll(wait_ms))
        for name, channel in self._channels.items():
            if channel.socket in ready:
                return name, channel.get_msg(timeout=0)
        return None

    def _drain(self, msg_id, seconds: float = 10.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            message = self._next_message()
            if message and message[1].get("parent_header", {}).get("msg_id") == msg_id \
                    and message[1]["header"]["msg_type"] == "status" \
                    and message[1]["content"].get("execution_state") == "idle":
                return

    def _student_output(self, name, text):
        self.output(mark_stderr(text) if name == "stderr" else str(text))

    def _answer_callback(self, prompt: str) -> str:
        if not prompt.startswith(CALLBACK_PROMPT):
            return ""  # input() in student code gets an empty line, as with nbgrader's stdin off
        try:
            request = wire.loads(prompt[len(CALLBACK_PROMPT):], MAX_REPLY_CHARACTERS)
            function = self._callbacks[int(request["callback"])]
            value = function(*self.unpack(request["args"]), **self.unpack(request["kwargs"]))
            return wire.dumps({"value": self.pack(value)})
        except Exception as error:  # the student's code sees the failure as a RuntimeError
            return wire.dumps({"error": f"{type(error).__name__}: {error}"})


def update_in_place(original, new):
    """Give the test's own array, list or dict the contents the student's call left in its copy."""
    if isinstance(original, np.ndarray) and isinstance(new, np.ndarray) and original.shape == new.shape \
            and original.flags.writeable:
        np.copyto(original, new, casting="unsafe")
    elif type(original) is list and type(new) is list:
        original[:] = new
    elif type(original) is dict and type(new) is dict:
        original.clear()
        original.update(new)


class Namespace(dict):
    """The test cells' globals: the grader's own names, and the student's as Remotes when asked for."""

    def __init__(self, bridge):
        super().__init__(__name__="__main__")
        self.bridge = bridge

    def __missing__(self, name):
        if hasattr(builtins, name):
            return getattr(builtins, name)
        try:
            return self.bridge.request("global", name)
        except StudentCodeError as error:
            raise NameError(f"name {name!r} is not defined") from error


@contextlib.contextmanager
def native_stderr_to(path: str):
    """Send what libraries write to file descriptor 2 (TensorFlow's C++ start-up notices) to `path`."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(target, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


class TrustedTests:
    """Runs the setup cell once and then each test cell in the grader, against one kernel's agent.

    What libraries print below Python while the tests run (TensorFlow's notices) goes to `log_path`.
    """

    def __init__(self, bridge: KernelBridge, setup_sources: list, log_path: str = os.devnull):
        self.bridge = bridge
        self.setup_sources = list(setup_sources)
        self.log_path = log_path
        self.namespace = None

    def _start(self):
        self.namespace = Namespace(self.bridge)
        for index, source in enumerate(self.setup_sources):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, f"<setup cell {index}>", "exec"), self.namespace)

    def run(self, source: str, name: str, timeout: float) -> list:
        """Outputs of the test cell `source` as nbgrader will score them (stream, execute_result, error)."""
        stdout = io.StringIO()
        self.bridge.output = lambda text: stdout.write(text) if stdout.tell() < MAX_STUDENT_OUTPUT else None
        self.bridge.deadline = time.monotonic() + timeout
        outputs, result, failure = [], None, None
        stderr = io.StringIO()
        kernel_side.BRIDGE = self.bridge  # the course's test helpers work through this kernel while the cell runs
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                    native_stderr_to(self.log_path):
                if self.namespace is None:
                    self._start()
                result = self._exec(source, name)
        except DeadKernelError:
            raise
        except BaseException as error:  # noqa: B902 (a test that calls exit() still fails, not the grader)
            failure = error
        finally:
            self.bridge.deadline = None
            kernel_side.BRIDGE = None
        text = stdout.getvalue()
        text += mark_stderr(stderr.getvalue())
        if text:
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=text))
        if failure is not None:
            outputs.append(exception_output(failure, name))
        elif result is not None:
            outputs.append(NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                                        data={"text/plain": repr(result)}))
        return outputs

    def _exec(self, source: str, name: str):
        tree = ast.parse(source, filename=name)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, name, "exec"), self.namespace)
        if last is not None:
            return eval(compile(ast.Expression(last.value), name, "eval"), self.namespace)
        return None


def error_output(ename: str, evalue: str, frames: str = "") -> NotebookNode:
    """An nbgrader error output (what makes a test cell score 0)."""
    trace = [frames, f"{ename}: {evalue}"] if frames else [f"{ename}: {evalue}"]
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=trace)


def exception_output(error: BaseException, name: str) -> NotebookNode:
    """The error output of an exception a test cell raised, with the frames of the test cell `name`."""
    ename = "CellTimeoutError" if isinstance(error, TimeoutError) else type(error).__name__
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == name]
    return error_output(ename, str(error), "".join(traceback.format_list(frames)))
