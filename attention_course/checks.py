"""Assertion helpers for the notebooks' test cells.

Every failure says what was checked, what was expected, what came back, and a hint,
so a student can act on it without reading the test code.
"""
import numpy as np

from attention_course.kernel_side import call_reporting_changes


def _fail(what, expected, got, hint):
    message = f"{what}: expected {expected}, got {got}."
    if hint:
        message += f" Hint: {hint}"
    raise AssertionError(message)


def _shape_of(value):
    shape = getattr(value, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(int(d) if d is not None else None for d in shape)
    except TypeError:
        return None


def check_type(what, got, expected_type, hint=""):
    """`got` must be an instance of `expected_type` (a type or a tuple of types)."""
    if not isinstance(got, expected_type):
        names = (expected_type if isinstance(expected_type, tuple) else (expected_type,))
        _fail(what, " or ".join(t.__name__ for t in names), type(got).__name__, hint)


def check_shape(what, got, expected_shape, hint=""):
    """`got` must have exactly `expected_shape` (None in the expected shape matches any size)."""
    shape = _shape_of(got)
    if shape is None:
        _fail(what, f"an array of shape {tuple(expected_shape)}", f"a {type(got).__name__} with no shape", hint)
    expected = tuple(expected_shape)
    same = len(shape) == len(expected) and all(e is None or e == s for e, s in zip(expected, shape))
    if not same:
        _fail(f"{what} (shape)", expected, shape, hint)


def check_close(what, got, expected, atol=1e-6, rtol=1e-5, hint=""):
    """`got` must have `expected`'s shape and match it element-wise within the tolerances."""
    expected = np.asarray(expected, dtype=float)
    try:
        got_array = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        _fail(what, f"numbers of shape {expected.shape}", f"a {type(got).__name__} that is not numeric", hint)
    check_shape(what, got_array, expected.shape, hint)
    if np.isnan(got_array).any() and not np.isnan(expected).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(got_array))[0])
        _fail(what, "finite values", f"NaN at index {where}", hint or "look for 0/0 or inf - inf")
    close = np.isclose(got_array, expected, atol=atol, rtol=rtol, equal_nan=True)
    if not close.all():
        index = tuple(int(i) for i in np.argwhere(~close)[0])
        worst = float(np.nanmax(np.abs(got_array - expected)))
        if expected.ndim == 0 or expected.size <= 12:
            expected_text, got_text = np.array2string(expected, precision=4), np.array2string(got_array, precision=4)
        else:
            expected_text = f"{expected[index]:.6g} at index {index}"
            got_text = f"{got_array[index]:.6g} (largest difference {worst:.3g})"
        _fail(what, expected_text, got_text, hint)


def check_equal(what, got, expected, hint=""):
    """`got == expected` for plain values (ints, strings, tuples, lists)."""
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        if np.shape(got) != np.shape(expected) or not np.array_equal(got, expected):
            _fail(what, np.array2string(np.asarray(expected)), np.array2string(np.asarray(got)), hint)
    elif got != expected:
        _fail(what, repr(expected), repr(got), hint)


def check_true(what, condition, expected, got, hint=""):
    """A property that must hold; `expected` and `got` describe it in words."""
    if not condition:
        _fail(what, expected, got, hint)


def check_call(what, function, *args, hint="", report_changes=False, **kwargs):
    """Call `function(*args, **kwargs)` and return its result; an exception it raises (a shape error, most
    often) becomes a failure that says what was called, what went wrong, and a hint, not a bare traceback.
    NumPy's floating-point warnings are silenced: the checks after the call judge the values.
    With `report_changes=True` it returns (result, the positions and keywords of the arguments the call
    changed in place), for tests of "leaves its input unchanged"."""
    try:
        with np.errstate(all="ignore"):
            if report_changes:
                return call_reporting_changes(function, *args, **kwargs)
            return function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - any error of the student's code is reported the same way
        message = f"{what} raised {error.__class__.__name__}: {error}."
        if hint:
            message += f" Hint: {hint}"
        raise AssertionError(message) from None
