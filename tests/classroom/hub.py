"""A classroom (python -m classroom) started for one test, and its REST API as the hub's admin service and
as each user.

The classroom runs in a fresh state folder under /tmp (its homes must be reachable by the course users,
which pytest's 0700 tmp_path is not) on free localhost ports, with its own user-name prefix; stopping it
sends the launcher SIGINT, the same as Ctrl-C, and the course users are removed again afterwards.
"""
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from classroom.layout import CHP, Classroom, user_processes
from grader.course import REPO

COURSE_ID = "attention"


def classroom_problem() -> str:
    """Why the classroom tests cannot run here ('' when they can)."""
    if os.geteuid() != 0:
        return "the classroom tests need root (JupyterHub's LocalProcessSpawner starts servers as the course users)"
    if not CHP.exists():
        return (f"configurable-http-proxy is missing ({CHP}): run `make classroom-deps` "
                "(needs Node.js and npm: apt-get install nodejs npm); .ci/run does it")
    if shutil.which("node") is None:
        return "Node.js is missing: apt-get install nodejs npm"
    if shutil.which("bwrap") is None:
        return "bubblewrap is missing (the Formgrader grades in its sandbox): apt-get install bubblewrap"
    return ""


class HTTPError(Exception):
    def __init__(self, code, body):
        super().__init__(f"HTTP {code}: {body[:500]!r}")
        self.code, self.body = code, body


def request(url: str, token: str = None, method: str = "GET", body=None, timeout: float = 300):
    """One HTTP request; JSON in and out. Raises HTTPError for 4xx/5xx."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        raise HTTPError(error.code, error.read().decode(errors="replace")) from None
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")


class RunningClassroom:
    """python -m classroom in a subprocess, plus helpers for its hub API."""

    def __init__(self, prefix: str, students: int, options=()):
        self.folder = Path(tempfile.mkdtemp(prefix=f"classroom-{prefix}", dir="/tmp"))
        self.folder.chmod(0o755)
        self.state = self.folder / "state"
        self.log_path = self.folder / "launcher.log"
        self._log = open(self.log_path, "w")
        env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_PATH", "NBGRADER_EXECUTION")}
        started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "classroom", "--state", str(self.state), "--port", "0",
             "--students", str(students), "--prefix", prefix, *options],
            cwd=REPO, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.room = None
        self._tokens = {}
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"python -m classroom exited with {self.process.returncode}:\n{self.log_tail()}")
            if "The classroom is running" in self.log_path.read_text():
                self.room = Classroom.load(self.state)
                break
            time.sleep(0.3)
        else:
            self.stop()
            raise RuntimeError(f"the classroom did not start within 180 s:\n{self.log_tail()}")
        self.start_seconds = time.monotonic() - started

    # -- API -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.room.url

    def admin(self, path: str, method: str = "GET", body=None):
        return request(f"{self.url}/hub/api/{path.lstrip('/')}", self.room.api_token, method, body)

    def token(self, user: str) -> str:
        """A token of `user` (made by the admin service): requests with it act as that user."""
        if user not in self._tokens:
            self._tokens[user] = self.admin(f"users/{user}/tokens", "POST", {"note": "classroom test"})["token"]
        return self._tokens[user]

    def as_user(self, user: str, path: str, method: str = "GET", body=None, server: str = None, timeout=300):
        """A request through the proxy to /user/<server>/<path> with `user`'s token (server: default own)."""
        return request(f"{self.url}/user/{server or user}/{path.lstrip('/')}", self.token(user), method, body, timeout)

    def start_servers(self, users, timeout: float = 600) -> float:
        """Ask the hub to start each user's server (all at once); wait until every one is ready."""
        started = time.monotonic()
        for user in users:
            try:
                self.admin(f"users/{user}/server", "POST", {})
            except HTTPError as error:
                if error.code != 400:  # 400: already running
                    raise
        waiting = set(users)
        while waiting and time.monotonic() - started < timeout:
            listed = self.admin("users?state=active&limit=500")
            ready = {u["name"] for u in listed if u.get("servers", {}).get("", {}).get("ready")}
            waiting -= ready
            if waiting:
                time.sleep(1)
        assert not waiting, f"servers not ready after {timeout:.0f} s: {sorted(waiting)}\n{self.hub_log_tail()}"
        return time.monotonic() - started

    def home(self, user: str) -> Path:
        return self.room.home(user)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def hub_log_tail(self, chars: int = 4000) -> str:
        path = self.state / "hub" / "jupyterhub.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    # -- Ctrl-C ---------------------------------------------------------------------------------
    def stop(self) -> dict:
        """SIGINT (Ctrl-C) to the launcher; returns what it reported (leftover processes it had to kill)."""
        report = {}
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=180)  # the hub's 90 s, then 30 s for kernels to end
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        stopped = self.state / "hub" / "last_stop.json"
        if stopped.exists():
            report = json.loads(stopped.read_text())
        report["returncode"] = self.process.returncode
        return report

    def remove(self):
        """Delete the course users and the state folder (after stop)."""
        users = self.room.users if self.room else []
        for pid, _ in user_processes(users):  # only the course users' own processes, should any be left
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for user in users:
            try:
                pwd.getpwnam(user)
            except KeyError:
                continue
            subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)
