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
from grader.check_coverage import RAN, CheckCoverage
from grader.kernel_client import LimitedBlockingKernelClient
from grader.wire import CALLBACK_PROMPT

AGENT_MODULE = "_attention_course_grading_agent"
AGENT_SOURCE = (Path(__file__).with_name("wire.py").read_text() + "\n"
                + Path(__file__).with_name("kernel_agent.py").read_text())
# A reply from the student's kernel larger than this (characters plus array bytes) is refused.
MAX_REPLY_CHARACTERS = 64 * 2 ** 20
# After the kernel's execute_reply, how long the iopub messages of that request may still take to arrive.
IOPUB_GRACE_SECONDS = 3.0
# A call-back from the student's code to a test's function: its request's size, and calls per test cell.
MAX_CALLBACK_CHARACTERS = 4 * 2 ** 20
MAX_CALLBACKS = 100_000
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
            f"_s.modules[{AGENT_MODULE!r}] = _m\n_m.install()\ndel _s, _t, _m")


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
        return len(self._items())  # the length of what iteration gives, never a separate claim

    def __iter__(self):
        return iter(self._items())

    def _items(self) -> list:
        """The object's items, crossed once as plain data (or references)."""
        items = self._ask("items", self)
        if type(items) is not list:
            raise TypeError("the student's object did not give its items as a list")
        return items

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
        self.max_message_bytes = int(getattr(client, "max_message_bytes", MAX_REPLY_CHARACTERS))
        self.deadline = None
        self._proxies = {}
        self._callbacks = {}  # number -> function, for the test cell that is running only
        self._callback_numbers = 0
        self._callbacks_run = 0
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
            if self.deadline is None:
                raise TypeError("a test's function can be sent to the student's kernel only while a test runs")
            self._callback_numbers += 1  # never reused: a call-back kept from an earlier test finds nothing
            self._callbacks[self._callback_numbers] = value
            return {"callback": self._callback_numbers}
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

    @contextlib.contextmanager
    def test_run(self, timeout: float):
        """The span of one test cell: its deadline, and call-backs that live only as long as it does."""
        self.deadline = time.monotonic() + timeout
        self._callbacks_run = 0
        try:
            yield
        finally:
            self.deadline = None
            self._callbacks.clear()

    def _execute(self, code: str, expect_reply: bool = True) -> dict:
        msg_id = self.client.execute(code, silent=False, store_history=False, allow_stdin=True)
        reply, idle, quiet_since, finished_at = None, False, time.monotonic(), None
        while not idle:
            if finished_at is not None and time.monotonic() - finished_at > IOPUB_GRACE_SECONDS:
                break  # the kernel answered on its shell channel; its iopub messages were refused or lost
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
                if size > self.max_message_bytes:
                    raise ValueError(f"your code's answer is {size:,} bytes, above the grader's limit of "
                                     f"{self.max_message_bytes:,}")
                reply = wire.loads(str(content.get("data", {}).get("reply", "")), self.max_message_bytes)
                self._reply_buffers = buffers
            elif kind == "error":
                reply = {"error": {"name": content.get("ename", "Error"), "builtin": "Exception",
                                   "message": content.get("evalue", "")}}
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
            elif channel == "shell" and kind == "execute_reply":
                finished_at = time.monotonic()
        if expect_reply and not isinstance(reply, dict):
            raise StudentCodeError(
                f"your kernel gave the grader no answer: an answer above {self.max_message_bytes // 2 ** 20} MB is "
                "refused before it is read, and an answer can also go missing when the grader's agent is replaced")
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
        """Run a test's function for the student's code: only during its test, before the deadline, on
        inputs of bounded size, a bounded number of times. The student's code sees a refusal as a RuntimeError."""
        if not prompt.startswith(CALLBACK_PROMPT):
            return ""  # input() in student code gets an empty line, as with nbgrader's stdin off
        try:
            self._callbacks_run += 1
            if self.deadline is None or time.monotonic() > self.deadline:
                raise TimeoutError("the test's time is up")
            if self._callbacks_run > MAX_CALLBACKS:
                raise RuntimeError(f"more than {MAX_CALLBACKS:,} calls to the test's functions in one test")
            request = wire.loads(prompt[len(CALLBACK_PROMPT):], MAX_CALLBACK_CHARACTERS)
            function = self._callbacks.get(request.get("callback"))
            if function is None:
                raise LookupError("that function belonged to a test that has ended")
            value = function(*self.unpack(request["args"]), **self.unpack(request["kwargs"]))
            answer = wire.dumps({"value": self.pack(value)})
            if len(answer) > MAX_CALLBACK_CHARACTERS:
                raise ValueError("the test function's answer is too large to send")
            return answer
        except Exception as error:  # noqa: BLE001 (the student's code sees the failure as a RuntimeError)
            return wire.dumps({"error": f"{type(error).__name__}: {error}"[:2000]})


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
        outputs, result, failure = [], None, None
        stderr = io.StringIO()
        try:
            # The course's test helpers (attention_course.kernel_side) work through this kernel while the cell runs.
            with self.bridge.test_run(timeout), kernel_side.bridged(self.bridge), contextlib.redirect_stdout(stdout), \
                    contextlib.redirect_stderr(stderr), native_stderr_to(self.log_path):
                if self.namespace is None:
                    self._start()
                result = self._exec(source, name)
        except DeadKernelError:
            raise
        except BaseException as error:  # noqa: B902 (a test that calls exit() still fails, not the grader)
            failure = error
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
        coverage = CheckCoverage(ast.parse(source, filename=name))
        self.namespace[RAN] = coverage.mark
        tree = coverage.tree
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, name, "exec"), self.namespace)
        result = eval(compile(ast.Expression(last.value), name, "eval"), self.namespace) if last is not None else None
        coverage.verify()
        return result


def error_output(ename: str, evalue: str, frames: str = "") -> NotebookNode:
    """An nbgrader error output (what makes a test cell score 0)."""
    trace = [frames, f"{ename}: {evalue}"] if frames else [f"{ename}: {evalue}"]
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=trace)


def exception_output(error: BaseException, name: str) -> NotebookNode:
    """The error output of an exception a test cell raised, with the frames of the test cell `name`."""
    ename = "CellTimeoutError" if isinstance(error, TimeoutError) else type(error).__name__
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == name]
    return error_output(ename, str(error), "".join(traceback.format_list(frames)))


def connect_tests(connection_info: dict, setup_sources: list, *, is_alive, interrupt,
                  max_message_bytes: int = MAX_REPLY_CHARACTERS, log_path: str = os.devnull,
                  install_timeout: float = 60) -> TrustedTests:
    """The whole chain for one kernel: a client of its own (size-limited sockets), the bridge, the agent
    installed in the kernel, and the trusted test runner with the setup cell's sources."""
    client = LimitedBlockingKernelClient()
    client.max_message_bytes = max_message_bytes
    client.load_connection_info(connection_info)
    client.start_channels()
    bridge = KernelBridge(client, is_alive=is_alive, interrupt=interrupt, output=lambda text: None)
    bridge.run_code(install_agent_code(), timeout=install_timeout)
    return TrustedTests(bridge, setup_sources, log_path)
