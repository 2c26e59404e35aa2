"""The transport between the trusted grader and the agent in one student kernel (the Jupyter protocol).

Each request goes to the agent as a message on one comm and its reply comes back on that comm, arrays as
binary buffers (grader/trusted/wire.py). The agent answers in the comm's handler; a test that handed the
student's code a function of its own has its requests run by an execute request instead, the only
kind of request during which the kernel may ask the grader something (input), which is how that
function is called back. Everything that arrives is bounded before it is used: message sizes (the
client's sockets, grader/sandbox/kernel_client.py), the reply's size, a deadline per test cell, call-backs
from the kernel to a test's functions (only during their test, with bounded input, a bounded number
of times). The student's printed output is passed on, stderr marked.
"""
import contextlib
import json
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import zmq
from nbclient.exceptions import DeadKernelError

from grader.limits import FIXED
from grader.trusted import wire
from grader.sandbox.kernel_client import DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_MESSAGE_BYTES
from grader.trusted.remote import Remote
from grader.trusted.student_errors import StudentCodeError, student_error
from grader.trusted.wire import CALLBACK_PROMPT

AGENT_MODULE = "_attention_course_grading_agent"
AGENT_SOURCE = (Path(__file__).with_name("wire.py").read_text() + "\n"
                + Path(__file__).with_name("kernel_agent.py").read_text())
# After the kernel's execute_reply, how long the iopub messages of that request may still take to arrive.
IOPUB_GRACE_SECONDS = FIXED["iopub_grace_seconds"].value
# A call-back from the student's code to a test's function: its request's size, and calls per test cell.
MAX_CALLBACK_CHARACTERS = FIXED["callback_characters"].value
MAX_CALLBACKS = FIXED["callbacks_per_cell"].value


class CellOutOfTime(BaseException):
    """The grader's deadline for a test cell passed while the student's code ran. A BaseException, so that a
    test's `except Exception` around the student's code reports it as what it is, and no exception rebuilt from
    the student's kernel (grader.trusted.student_errors) is one, whatever it is named."""


def mark_stderr(text: str) -> str:
    """Error-stream text kept as plain output: each line marked, so it informs without failing the cell."""
    return "".join(f"[stderr] {line}" for line in str(text).splitlines(True))


def install_agent_code() -> str:
    """Code that makes the agent a module in the kernel (run once per kernel start)."""
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({AGENT_MODULE!r})\n"
            f"exec(compile({AGENT_SOURCE!r}, {AGENT_MODULE!r}, 'exec'), _m.__dict__)\n"
            f"_s.modules[{AGENT_MODULE!r}] = _m\n_m.install()\ndel _s, _t, _m")


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
        # A reply's size (characters plus array bytes), and of that its JSON (decoded, text can take four times
        # its size): the client's limits (GradingLimits.message_mb, message_json_mb).
        self.max_message_bytes = int(getattr(client, "max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES))
        self.max_json_bytes = int(getattr(client, "max_json_bytes", DEFAULT_MAX_JSON_BYTES))
        self.deadline = None
        self._proxies = {}
        self._callbacks = {}  # number -> function, for the test cell that is running only
        self._callback_numbers = 0
        self._callbacks_run = 0
        self._answering = 0  # call-backs being answered (their functions may ask the kernel something)
        self._executing = None  # the execute request that serves requests with call-backs
        self._reply_buffers = []
        self._requests, self._comm_id = 0, None
        self._channels = {"iopub": client.iopub_channel, "stdin": client.stdin_channel,
                          "shell": client.shell_channel}
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
                raise TypeError("a test's function goes to the student's kernel only while a test runs")
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
        if self._answering:
            return self._request_within_callback(op, args)
        buffers = []
        text = wire.dumps({"op": op, "args": wire.pack(list(args), self._send, buffers),
                           "errstate": np.geterr(), "limit": self.max_message_bytes})
        self._requests += 1
        request_id = str(self._requests)
        if self._comm_id is None:  # one comm for all requests, opened after the agent registered its target
            self._comm_id = uuid.uuid4().hex
            self._send_shell("comm_open", {"comm_id": self._comm_id, "target_name": wire.REQUEST_TARGET,
                                           "data": {}})
        # Served in the comm's handler, a request costs a third of what an execute request's messages and
        # bookkeeping cost; call-backs need the execute request's input channel.
        by_execute = bool(self._callbacks)
        sent = self._send_shell("comm_msg", {"comm_id": self._comm_id, "data": {
            "id": request_id, "request": text, "by_execute": by_execute}}, buffers)
        if by_execute:
            reply = self._execute(f"__import__('sys').modules[{AGENT_MODULE!r}].serve({request_id!r})",
                                  request_id)
        else:
            reply = self._exchange(sent["header"]["msg_id"], request_id)
        if "error" in reply:
            raise student_error(reply["error"])
        return wire.unpack(reply["value"], self._receive, self._reply_buffers)

    def _request_within_callback(self, op, args):
        """A request made while the kernel waits for the answer to one of its call-backs (a test's function,
        or a correct version of an earlier exercise, handed one of the student's functions): sent as the
        answer to that input, with the kernel's reply coming as its next input."""
        self.client.input(wire.dumps({"request": {"op": op, "args": wire.pack(list(args), self._send),
                                                  "errstate": np.geterr(), "limit": MAX_CALLBACK_CHARACTERS}}))
        reply = self._exchange(self._executing, answer_wanted=True)
        if "error" in reply:
            raise student_error(reply["error"])
        return wire.unpack(reply["value"], self._receive)

    def _send_shell(self, kind: str, content: dict, buffers=None) -> dict:
        return self.client.session.send(self.client.shell_channel.socket, kind, content, buffers=buffers)

    def run_code(self, code: str, timeout: float):
        """Run grader code in the kernel (the agent's installation); its output is dropped."""
        self.deadline = time.monotonic() + timeout
        try:
            self._execute(code)
        finally:
            self.deadline = None

    def close(self):
        self.client.stop_channels()

    @property
    def callbacks_run(self) -> int:
        """How many calls of the test's functions the student's code made in the running test cell."""
        return self._callbacks_run

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

    def _execute(self, code: str, request_id: str = None) -> dict:
        """Run `code` in the kernel; the reply to request `request_id` that came meanwhile (when given)."""
        msg_id = self.client.execute(code, silent=False, store_history=False, allow_stdin=True)
        self._executing = msg_id
        return self._exchange(msg_id, request_id)

    def _exchange(self, msg_id: str, request_id: str = None, answer_wanted: bool = False) -> dict:
        """Read what the kernel sends for the shell message `msg_id` until it is idle again: the student's
        printed output, input requests, and the reply to request `request_id` (required when given).
        With `answer_wanted`, until the kernel answers the request sent within a call-back."""
        reply, idle, quiet_since, finished_at = None, False, time.monotonic(), None
        while not idle:
            if finished_at is not None and time.monotonic() - finished_at > IOPUB_GRACE_SECONDS:
                break  # the kernel answered; its iopub messages were refused or lost
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.interrupt()
                self._drain(msg_id)
                raise CellOutOfTime("the test cell ran out of time while your code was running "
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
                prompt = str(content.get("prompt", ""))
                asked = (wire.loads(prompt[len(CALLBACK_PROMPT):], MAX_CALLBACK_CHARACTERS)
                         if answer_wanted and prompt.startswith(CALLBACK_PROMPT) else None)
                if isinstance(asked, dict) and isinstance(asked.get("answer"), dict):
                    return asked["answer"]
                self.client.input(self._answer_callback(prompt))
            elif kind == "stream":
                self._student_output(content.get("name"), content.get("text", ""))
            elif (kind == "comm_msg" and request_id is not None and content.get("comm_id") == self._comm_id
                  and isinstance(content.get("data"), dict) and content["data"].get("id") == request_id):
                buffers = list(message.get("buffers") or [])
                size = sum(memoryview(b).nbytes for b in buffers)
                if size > self.max_message_bytes:
                    raise ValueError(f"your code's answer is {size:,} bytes, above the grader's limit of "
                                     f"{self.max_message_bytes:,}")
                reply = wire.loads(str(content["data"].get("reply", "")),
                                   min(self.max_message_bytes, self.max_json_bytes))
                self._reply_buffers = buffers
                finished_at = finished_at or time.monotonic()
            elif kind == "error":
                reply = {"error": {"name": content.get("ename", "Error"), "builtin": "Exception",
                                   "message": content.get("evalue", "")}}
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
            elif channel == "shell" and kind == "execute_reply":
                finished_at = time.monotonic()
        if answer_wanted:
            raise StudentCodeError("your kernel stopped before it answered the grader")
        if request_id is not None and not isinstance(reply, dict):
            raise StudentCodeError(
                f"your kernel gave the grader no answer: an answer above {self.max_message_bytes // 2 ** 20} MB, "
                f"or whose text takes above {self.max_json_bytes // 2 ** 20} MB or holds over {wire.MAX_ITEMS:,} "
                "items, is refused before it is read, and an answer can also go missing when the grader's agent "
                "is replaced")
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
        inputs of bounded size, a bounded number of times; a correct version of an earlier exercise in its
        own process, bounded in memory and stopped at the deadline. The student's code sees a refusal as a
        RuntimeError."""
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
            self._answering += 1
            try:
                if hasattr(function, "answer"):  # a correct version: run in its worker (grader/trusted/reference_worker.py)
                    answer = wire.dumps(function.answer(request["args"], request["kwargs"], self.deadline, self))
                else:
                    answer = wire.dumps({"value": self.pack(function(*self.unpack(request["args"]),
                                                                     **self.unpack(request["kwargs"])))})
            finally:
                self._answering -= 1
            if len(answer) > MAX_CALLBACK_CHARACTERS:
                raise ValueError("the test function's answer is too large to send")
            return answer
        except Exception as error:  # noqa: BLE001 (the student's code sees the failure as a RuntimeError)
            return wire.dumps({"error": f"{type(error).__name__}: {error}"[:2000]})
