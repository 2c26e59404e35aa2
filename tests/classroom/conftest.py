"""The classroom tests start `python -m classroom` (JupyterHub, real course users, the shared exchange).

They need root, bubblewrap, Node.js and the classroom's proxy (`make classroom-deps`); without them they
skip and say which is missing. .ci/run installs all of them.
"""
import pytest

from tests.classroom.hub import RunningClassroom, classroom_problem


@pytest.fixture(autouse=True)
def _needs_classroom():
    problem = classroom_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture
def start_classroom():
    """start_classroom(prefix, students, options) -> a RunningClassroom (options: more `python -m classroom`
    flags); stopped (Ctrl-C) and removed after the test."""
    started = []

    def start(prefix: str, students: int, options=()):
        room = RunningClassroom(prefix, students, options)
        started.append(room)
        return room

    yield start
    for room in started:
        room.stop()
        room.remove()
