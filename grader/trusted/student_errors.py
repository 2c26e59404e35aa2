"""Exceptions the student's code raised, rebuilt in the grader as plain data from the kernel's report.

The class is named after the student's exception and derives from the builtin it derived from, so a
test that expects a ValueError still sees one; nothing of the student's classes is imported.
"""
import builtins


class StudentCodeError(Exception):
    """An exception the student's code raised; its class is named after the student's exception."""


def student_error(info: dict) -> Exception:
    base = getattr(builtins, str(info.get("builtin")), Exception)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    name = str(info.get("name", "Error"))[:80] or "Error"
    kind = type(name, (StudentCodeError, base), {"__module__": "student"})
    trace = str(info.get("traceback", "")).strip()
    message = info.get("message", "")
    return kind(f"{message}\n--- raised in your code ---\n{trace}" if trace else message)
