"""The grader's agent inside the student's (sandboxed) kernel: it answers the trusted grader's requests.

Its source is sent into the kernel with grader/trusted/wire.py when the first test cell runs. Each request asks for
one thing the tests need (call a graded function, read an attribute of a model it built, ...); the
answer goes back as plain data (grader/trusted/wire.py), or as a reference to an object the agent keeps.
Nothing here decides a verdict: a student who changes this agent only changes their own answers.
"""
import builtins
import getpass
import importlib
import operator
import sys
import traceback

import numpy as np
from comm import get_comm_manager

try:  # in the kernel, grader/trusted/wire.py's source runs first in this module
    pack  # noqa: B018
except NameError:  # imported by the grader's tests
    from grader.trusted.wire import CALLBACK_PROMPT, OPERATIONS, PLAIN_KINDS, REQUEST_TARGET, dumps, loads, pack, unpack

_objects = {}
_requests = {}  # id -> (request text, buffers, comm): requests an execute request will serve
_input_open = False  # True while an execute request serves: only then can the kernel ask the grader (input)


def _describe(value) -> dict:
    _objects[id(value)] = value
    mro = [[c.__module__, c.__qualname__] for c in type(value).__mro__][:30]
    return {"ref": id(value), "mro": mro, "is_type": isinstance(value, type)}


def _is_tensor(value) -> bool:
    kind = type(value)
    return (kind.__module__.startswith("tensorflow") and "Variable" not in kind.__name__
            and callable(getattr(value, "numpy", None)))


def _other(value):
    return np.asarray(value) if _is_tensor(value) else _describe(value)


def _callback(number):
    def call_back(*args, **kwargs):
        if not _input_open:  # the grader serves in the comm's handler only when its test has no call-backs
            raise RuntimeError("that function belonged to a test that has ended")
        message = dumps({"callback": number, "args": pack(list(args), _other), "kwargs": pack(kwargs, _other)})
        while True:
            answer = builtins.input(CALLBACK_PROMPT + message)
            if not answer:  # what a refused message's stand-in gets
                raise RuntimeError("the grader refused this call: its message is above the limit of what the "
                                   "grader reads")
            reply = loads(answer, 1 << 28)
            if "request" not in reply:
                break
            # While it answers, the test's function asks this kernel for something (a function of the
            # student's it was handed): carried out here, answered on the next input.
            message = '{"answer": ' + _carry_out(reply["request"], None)[0] + "}"
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return unpack(reply["value"], _resolve)
    return call_back


def _resolve(tree):
    if "ref" in tree:
        return _objects[tree["ref"]]
    if "callback" in tree:
        return _callback(tree["callback"])
    if "keras" in tree:
        import keras
        made = keras.saving.deserialize_keras_object(tree["keras"])
        weights = unpack(tree["weights"], _resolve)
        if weights:
            made.set_weights(weights)
        return made
    if "helper" in tree:
        module, name = tree["helper"]
        if module.split(".")[0] != "attention_course":
            raise ValueError(f"not a course helper: {module}.{name}")
        return getattr(importlib.import_module(module), name)
    raise ValueError(f"unknown value in a request: {sorted(tree)}")


def _main():
    return sys.modules["__main__"].__dict__


def _global(name):
    namespace = _main()
    if name not in namespace:
        raise NameError(f"name {name!r} is not defined")
    return namespace[name]


def _course_globals():
    """The notebook's globals are swapped by the course's own helper, the one tests use in a kernel."""
    return importlib.import_module("attention_course.kernel_side")


def _array(value, dtype=None):
    array = np.asarray(value, dtype=dtype)
    if array.dtype.kind not in PLAIN_KINDS:
        raise TypeError(f"cannot be read as numbers: array of dtype {array.dtype}")
    return array


def _call_changes(target, args, kwargs) -> list:
    """[the call's result, the positions and keywords of the arguments it changed in place]: whether a call
    changed its input is a separate fact the grader asks for; the changed data never goes back."""
    before = {where: _snapshot(value) for where, value in {**dict(enumerate(args)), **kwargs}.items()}
    result = target(*args, **kwargs)
    now = {**dict(enumerate(args)), **kwargs}
    return [result, [where for where, snapshot in before.items() if _snapshot(now[where]) != snapshot]]


HANDLERS = {
    "global": _global,
    "getattr": getattr,
    "setattr": setattr,
    "call": lambda target, args, kwargs: target(*args, **kwargs),
    "call_changes": _call_changes,
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "items": lambda value: list(value)[:1_000_000],
    "contains": operator.contains,
    "repr": repr,
    "str": str,
    "format": format,
    "int": int,
    "float": float,
    "index": operator.index,
    "array": _array,
    "isinstance": isinstance,
    "issubclass": issubclass,
    "set_globals": lambda values: _course_globals().set_globals(values),
    "restore_globals": lambda before: _course_globals().restore_globals(before),
}
assert set(HANDLERS) == set(OPERATIONS), "the agent handles exactly the operations of grader/trusted/wire.py"


def _builtin_base(error: BaseException) -> str:
    for kind in type(error).__mro__:
        if kind.__module__ == "builtins":
            return kind.__name__
    return "Exception"


def _snapshot(value):
    packed = []
    return pack(value, _other, packed), packed


def _receive_request(comm, opened):
    def take(message):
        data = message["content"]["data"]
        request = (data["request"], message.get("buffers") or [], comm)
        if data.get("by_execute"):
            _requests[data["id"]] = request
        else:
            _answer(data["id"], *request, through_execute=False)
    comm.on_msg(take)


def install():
    """Listen for the grader's requests (the grader's installation code calls this once per kernel)."""
    get_comm_manager().register_target(REQUEST_TARGET, _receive_request)


def serve(request_id: str):
    """Carry out a request that came with `by_execute` (the execute request the grader sent next runs this)."""
    _answer(request_id, *_requests.pop(request_id), through_execute=True)


def _empty_line(*prompt_and_stream, **keywords):
    return ""


def _answer(request_id: str, text: str, request_buffers: list, comm, through_execute: bool):
    """Carry out one request and send the reply on its comm, arrays as binary buffers.

    Served by an execute request, input() reaches the grader (how the test's functions are called
    back); served in the comm's handler, input() and getpass() get an empty line, as the grader answers
    them."""
    global _input_open
    saved = (builtins.input, getpass.getpass)
    _input_open = through_execute
    if not through_execute:
        builtins.input = getpass.getpass = _empty_line
    try:
        reply, buffers = _carry_out(text, [bytes(b) for b in request_buffers])
    finally:
        (builtins.input, getpass.getpass), _input_open = saved, False
    comm.send(data={"id": request_id, "reply": reply}, buffers=buffers)


def _carry_out(request, request_buffers):
    """(reply as JSON text, its buffers) for one request (its JSON text, or read already): {"value": ...} or
    {"error": ...}. With `request_buffers` None, arrays travel inside the text both ways (a request made
    while a call-back is answered)."""
    buffers = [] if request_buffers is not None else None
    try:
        if isinstance(request, str):
            request = loads(request, 1 << 28)
        arguments = unpack(request["args"], _resolve, request_buffers)
        with np.errstate(**request.get("errstate", {})):
            result = HANDLERS[request["op"]](*arguments)
        reply = dumps({"value": pack(result, _other, buffers)})
        size = len(reply) + sum(len(buffer) for buffer in buffers or [])
        limit = int(request.get("limit", size))
        if size > limit:  # said here: a message above the limit is dropped by the grader's socket unread
            raise ValueError(f"your code's answer is {size:,} bytes, above the grader's limit of {limit:,}")
        return reply, buffers or []
    except BaseException as error:  # noqa: B902 (SystemExit and KeyboardInterrupt are answers too)
        frames = traceback.format_exception(type(error), error, error.__traceback__)
        return dumps({"error": {"name": type(error).__name__, "builtin": _builtin_base(error),
                                "message": str(error)[:4000], "traceback": "".join(frames[-12:])[-8000:]}}), []
