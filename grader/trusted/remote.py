"""Stand-ins for the student's objects: every use is one request to the agent in the student's kernel.

What a Remote answers is data (numbers, arrays, strings, references to other objects) that the test
then checks in the grader. A Remote is never asked to decide: it is truthy like any object, equal
only to itself, and its length is the number of items it gives (one request), so a sequence cannot
report three items and yield none.
"""
import operator
import sys

import numpy as np

# Packages whose classes a Remote may claim to be an instance of (for isinstance checks in tests);
# only modules the grader has already imported are used, nothing is imported on the kernel's word.
LIBRARY_PACKAGES = ("keras", "tensorflow", "numpy")
PLAIN_DUNDERS = {"__name__", "__qualname__", "__module__", "__doc__"}


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
