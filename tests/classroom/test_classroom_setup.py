"""`python -m classroom` (what `make classroom` runs): who sees what, who can open what, and Ctrl-C.

Through the hub's REST API with each person's own token: the instructor's server has the Formgrader and
the course; a student's has the Assignments list and no Formgrader, Create Assignment or course list;
a student can open neither the instructor's server nor another student's, and as a Unix user cannot
read their files. Ctrl-C stops the hub, every server and the proxy.
"""
import json
import re
import socket
import stat
import subprocess

import pytest

from classroom.layout import STUDENT_HIDDEN_PLUGINS, user_processes
from grader.course import SOLUTIONS, assignments
from tests.classroom.hub import COURSE_ID, HTTPError

pytestmark = [pytest.mark.slow, pytest.mark.classroom]


def status_of(call) -> int:
    try:
        call()
        return 200
    except HTTPError as error:
        return error.code


def disabled_plugins(lab_page: str) -> set:
    """The plugins JupyterLab's page config (the jupyter-config-data script) switches off."""
    config = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', lab_page, re.S)
    return set(json.loads(config.group(1)).get("disabledExtensions") or [])


def as_unix_user(user: str, *command) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, text=True)


def test_roles_separation_and_ctrl_c(start_classroom):
    hub = start_classroom("crs-", students=2)
    room = hub.room
    instructor, (alice, bob) = room.instructor, room.students
    print(f"classroom ready in {hub.start_seconds:.1f} s")
    spawn = hub.start_servers([instructor, alice, bob])
    print(f"3 servers ready in {spawn:.1f} s")

    # Groups as nbgrader names them for a course on a hub.
    groups = {g["name"]: sorted(g["users"]) for g in hub.admin("groups")}
    assert groups[f"formgrade-{COURSE_ID}"] == [instructor]
    assert groups[f"nbgrader-{COURSE_ID}"] == sorted([alice, bob])

    # The instructor: the Formgrader lists the course's assignments; the course directory is theirs.
    listed = sorted(a["name"] for a in hub.as_user(instructor, "formgrader/api/assignments"))
    assert listed == assignments(SOLUTIONS)
    course = room.course_dir
    assert course.owner() == instructor and (course / "gradebook.db").owner() == instructor

    # A student: the Assignments list works; the instructor's tools are absent, on the server and in the page.
    assert hub.as_user(alice, f"assignments?course_id={COURSE_ID}") == {"success": True, "value": []}
    for path in ("formgrader", "formgrader/api/assignments", "formgraders"):
        assert status_of(lambda: hub.as_user(alice, path)) == 404, f"a student's server answers /{path}"
    hidden = disabled_plugins(hub.as_user(alice, "lab"))
    assert set(STUDENT_HIDDEN_PLUGINS) <= hidden, f"a student's JupyterLab still loads {set(STUDENT_HIDDEN_PLUGINS) - hidden}"
    assert not set(STUDENT_HIDDEN_PLUGINS) & disabled_plugins(hub.as_user(instructor, "lab"))

    # Nobody's token opens somebody else's server.
    for user, other in ((alice, instructor), (alice, bob), (bob, alice)):
        for path in ("api/contents", "lab") + (("formgrader", "formgrader/api/assignments") if other == instructor else ()):
            code = status_of(lambda: hub.as_user(user, path, server=other))
            assert code == 403, f"{user} opening /user/{other}/{path}: HTTP {code}, expected 403"

    # As Unix users: homes are private; the exchange is shared with the sticky bit.
    for user in room.users:
        mode = room.home(user).stat().st_mode
        assert stat.S_IMODE(mode) == 0o700 and room.home(user).owner() == user
    assert stat.S_IMODE(room.exchange.stat().st_mode) == 0o1777
    for target in (course / "gradebook.db", course / "source", room.home(bob)):
        run = as_unix_user(alice, "ls", str(target))
        assert run.returncode != 0 and "Permission denied" in run.stderr, f"{alice} can read {target}: {run.stdout}"
    assert as_unix_user(alice, "ls", str(room.home(alice))).returncode == 0

    # Ctrl-C: the launcher stops the hub, which stops the servers and the proxy; nothing is left running.
    report = hub.stop()
    assert report["returncode"] == 0, hub.log_tail()
    assert report["leftover_processes_killed"] == 0, "the hub left servers behind"
    assert user_processes(room.users) == []
    for port in (room.port, room.hub_port, room.proxy_api_port):
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still answers after Ctrl-C"
