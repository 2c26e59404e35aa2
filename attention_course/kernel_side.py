"""Test helpers that behave the same in your own kernel and when your work is graded.

When you run a test cell, it runs in your kernel and these helpers act on your notebook directly.
When your work is graded, the test cells run in the grader (grader/trusted/trusted_tests.py), which reaches your
functions and models through your kernel; there, the grader sets BRIDGE and these helpers send
their work to your kernel instead.
"""
import contextlib
import copy
import functools
import sys
import types

import numpy as np

BRIDGE = None  # the grader's link to the student's kernel while it grades; None in a notebook


@contextlib.contextmanager
def bridged(bridge):
    """The grader's side: the helpers below work through `bridge` for the duration of one test cell."""
    global BRIDGE
    BRIDGE = bridge
    try:
        yield
    finally:
        BRIDGE = None


def call_reporting_changes(function, *args, **kwargs):
    """(function(*args, **kwargs), [positions and keywords of the arguments the call changed in place]).

    When graded, your kernel makes the call and tells only which arguments changed, never their new contents."""
    if BRIDGE is not None:
        result, changed = BRIDGE.request("call_changes", function, list(args), kwargs)
        return result, [where for where in changed if type(where) in (int, str)]
    arguments = {**dict(enumerate(args)), **kwargs}
    before = {where: copy.deepcopy(value) for where, value in arguments.items()}
    result = function(*args, **kwargs)
    return result, [where for where, value in arguments.items() if not _same(value, before[where])]


def _same(now, before) -> bool:
    try:
        if isinstance(now, np.ndarray) or isinstance(before, np.ndarray):
            return np.shape(now) == np.shape(before) and bool(np.array_equal(now, before, equal_nan=True))
        return bool(now == before)
    except (TypeError, ValueError):
        return True


@contextlib.contextmanager
def student_globals(**values):
    """Give the notebook's global names other values inside the block (layers, sizes), then restore them.

    Tests use it for exercises that read shared objects from the notebook, like the shared
    attention layers of notebook 03. Keras layers are handed over with their weights.
    """
    swap, restore = ((lambda new: BRIDGE.request("set_globals", new), lambda old: BRIDGE.request("restore_globals", old))
                     if BRIDGE is not None else (set_globals, restore_globals))
    before = swap(values)
    try:
        yield
    finally:
        restore(before)


_MISSING = object()  # "no such global before"
_SWAPS = {}  # number -> what set_globals replaced, until restore_globals(number) puts it back
_swap_numbers = iter(range(1, 2 ** 62))


def set_globals(values: dict) -> int:
    """Give the notebook's globals these values; return a number for restore_globals (the grader's agent
    uses this too).

    A function defined in the notebook that took a replaced global as a default argument
    (`def attention(Q, K, V, score_fn=scaled_dot_score)`) gets the new value there too, as if the notebook
    had been run again from the top with it."""
    namespace = sys.modules["__main__"].__dict__
    before = {name: namespace.get(name, _MISSING) for name in values}
    # Only functions and classes: a default equal to a replaced number may be a literal, not the global.
    replaced = {id(old): values[name] for name, old in before.items() if isinstance(old, (types.FunctionType, type))}
    defaults = []
    for function in _notebook_functions(namespace):
        for attribute in ("__defaults__", "__kwdefaults__"):
            old = getattr(function, attribute, None)
            if isinstance(old, tuple) and any(id(v) in replaced for v in old):
                setattr(function, attribute, tuple(replaced.get(id(v), v) for v in old))
                defaults.append((function, attribute, old))
            elif isinstance(old, dict) and any(id(v) in replaced for v in old.values()):
                setattr(function, attribute, {k: replaced.get(id(v), v) for k, v in old.items()})
                defaults.append((function, attribute, old))
    namespace.update(values)
    number = next(_swap_numbers)
    _SWAPS[number] = (before, defaults)
    return number


def restore_globals(number: int):
    """Undo set_globals."""
    before, defaults = _SWAPS.pop(int(number), ({}, []))
    for function, attribute, old in defaults:
        setattr(function, attribute, old)
    namespace = sys.modules["__main__"].__dict__
    for name, value in before.items():
        if value is _MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = value


def _notebook_functions(namespace: dict) -> list:
    """The functions the notebook defined: its global functions and the methods of its own classes."""
    found = []
    for value in list(namespace.values()):
        if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
            found.append(value)
        elif isinstance(value, type) and value.__module__ == "__main__":
            found += [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    return found


def beside_the_model(function):
    """A helper that reads a model's insides: run where the model is (your kernel, when graded)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        if BRIDGE is not None:
            return BRIDGE.request("call", run, list(args), kwargs)
        return function(*args, **kwargs)
    run.__attention_course_helper__ = True
    return run
