"""Plain data across the sandbox boundary: JSON, with arrays as .npy bytes (never a pickle).

Both directions carry arrays as binary frames of a comm message (`buffers`), so large arrays cost
no text encoding; only call-backs and written-back arguments use base64 text.

Both sides use this file: the trusted grader imports it, and its source is sent into the student's
kernel together with grader/trusted/kernel_agent.py. What cannot travel as data is handed to `other`, a
function of the side that packs: the kernel turns it into a reference to an object it keeps, the
grader into a copy of a Keras object or a call-back (see grader/trusted/bridge.py).
"""
import base64
import io
import json
import math

import numpy as np

REQUEST_TARGET = "attention-course-request"  # the comm that carries the grader's requests and their replies
CALLBACK_PROMPT = "attention-course-callback:"  # input() prompt of a call-back from the kernel to a test
# The requests the grader may make of the agent, one name each (grader/trusted/kernel_agent.py HANDLERS).
OPERATIONS = ("global", "getattr", "setattr", "call", "call_changes", "getitem", "setitem", "items",
              "contains", "repr", "str", "format", "int", "float", "index", "array", "isinstance",
              "issubclass", "set_globals", "restore_globals")
MAX_DEPTH = 40
# Items in one message's JSON, counted by its commas before it is decoded: decoded, an item costs up to
# about 300 bytes (a dict with its strings), so 8 MB of text could otherwise become gigabytes.
MAX_ITEMS = 500_000
# Array kinds that load without pickles: bool, ints, unsigned, floats, complex, bytes and str.
PLAIN_KINDS = "biufcSU"


def pack(value, other, buffers=None, depth=0):
    """A JSON-ready tree for `value`, arrays appended to `buffers` when given (else inline as base64).

    `other(value)` handles whatever is not plain data: it returns a tree (a dict) or a plain value
    to pack instead (a tensor as its array)."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply to send")
    if value is None or type(value) in (bool, str):
        return value
    if type(value) is int:
        return value if abs(value) < 2 ** 53 else {"int": str(value)}
    if type(value) is float:
        return {"float": repr(value)}
    if isinstance(value, (np.ndarray, np.generic)) and type(value).__module__ == "numpy" \
            and value.dtype.kind in PLAIN_KINDS:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(value), allow_pickle=False)
        if buffers is None:
            return {"npy": base64.b64encode(buffer.getvalue()).decode(),
                    "scalar": isinstance(value, np.generic)}
        buffers.append(buffer.getvalue())
        return {"npy": len(buffers) - 1, "scalar": isinstance(value, np.generic)}
    if type(value) in (list, tuple):
        return {type(value).__name__: [pack(item, other, buffers, depth + 1) for item in value]}
    if type(value) is dict:
        return {"dict": [[pack(k, other, buffers, depth + 1), pack(v, other, buffers, depth + 1)]
                         for k, v in value.items()]}
    if type(value) is bytes:
        return {"bytes": base64.b64encode(value).decode()}
    converted = other(value)
    return converted if isinstance(converted, dict) else pack(converted, other, buffers, depth + 1)


def unpack(tree, resolve, buffers=(), depth=0):
    """The value `pack` made (its arrays in `buffers`); `resolve(tree)` turns what `other` packed back
    into an object."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply to read")
    if tree is None or type(tree) in (bool, str, int):
        return tree
    if type(tree) is not dict:
        raise ValueError(f"unexpected {type(tree).__name__} in a message")
    if "float" in tree:
        return float(tree["float"])
    if "int" in tree:
        return int(tree["int"])
    if "npy" in tree:
        data = buffers[tree["npy"]] if type(tree["npy"]) is int else base64.b64decode(tree["npy"])
        array = load_npy(data)
        return array[()] if tree.get("scalar") else array
    if "list" in tree:
        return [unpack(item, resolve, buffers, depth + 1) for item in tree["list"]]
    if "tuple" in tree:
        return tuple(unpack(item, resolve, buffers, depth + 1) for item in tree["tuple"])
    if "dict" in tree:
        return {unpack(k, resolve, buffers, depth + 1): unpack(v, resolve, buffers, depth + 1)
                for k, v in tree["dict"]}
    if "bytes" in tree:
        return base64.b64decode(tree["bytes"])
    return resolve(tree)


def load_npy(data: bytes) -> np.ndarray:
    """An array from .npy bytes whose header is checked first: a plain dtype, and a shape whose size is the
    bytes that follow it (np.load would allocate what a header claims before reading what is there)."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0)):  # 3.0 is for structured dtypes, which are not plain
        raise ValueError(f"unknown .npy version {version}")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(stream)
    if dtype.hasobject or dtype.kind not in PLAIN_KINDS:
        raise ValueError(f"array of dtype {dtype} refused")
    if math.prod(shape) * dtype.itemsize != len(data) - stream.tell():
        raise ValueError(f"array header says {shape} of {dtype}, but {len(data) - stream.tell():,} bytes follow")
    stream.seek(0)
    return np.load(stream, allow_pickle=False)


def dumps(tree) -> str:
    return json.dumps(tree, separators=(",", ":"))


def loads(text: str, limit: int):
    if len(text) > limit:
        raise ValueError(f"message of {len(text):,} characters, above the limit of {limit:,}")
    items = text.count(",") + 1
    if items > MAX_ITEMS:
        raise ValueError(f"message of about {items:,} items, above the limit of {MAX_ITEMS:,}")
    return json.loads(text)
