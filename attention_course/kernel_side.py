"""Test helpers that behave the same in your own kernel and when your work is graded.

When you run a test cell, it runs in your kernel and these helpers act on your notebook directly.
When your work is graded, the test cells run in the grader (grader/trusted_tests.py), which reaches your
functions and models through your kernel; there, the grader sets BRIDGE and these helpers send
their work to your kernel instead.
"""
import contextlib
import copy
import functools
import sys

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


_MISSING = object()  # "no such global before" (when graded it goes to the grader and back as a reference)


def set_globals(values: dict) -> dict:
    """Give the notebook's globals these values; return what they were (the grader's agent uses this too)."""
    namespace = sys.modules["__main__"].__dict__
    before = {name: namespace.get(name, _MISSING) for name in values}
    namespace.update(values)
    return before


def restore_globals(before: dict):
    """Undo set_globals."""
    namespace = sys.modules["__main__"].__dict__
    for name, value in before.items():
        if value is _MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = value


def beside_the_model(function):
    """A helper that reads a model's insides: run where the model is (your kernel, when graded)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        if BRIDGE is not None:
            return BRIDGE.request("call", run, list(args), kwargs)
        return function(*args, **kwargs)
    run.__attention_course_helper__ = True
    return run
