"""Everything a classroom needs on disk before JupyterHub starts: users, homes, exchange, configuration.

Layout of the state folder (default /srv/attention-classroom):

    classroom.json        0600 root: URL, ports, users and passwords, the admin service token
    hub/                  0700 root: the hub's database, cookie secret and log
    exchange/             1777: the nbgrader exchange (nbgrader makes attention/{outbound,inbound,feedback})
    config/common/        read by every single-user server: course id and exchange (nbgrader_config.py),
                          JupyterLab plugins that would reach the internet switched off (labconfig/)
    config/instructor/    read by the instructor's server only: lets JupyterLab show the Formgrader in a tab
    config/students/      read by students' servers only: the Formgrader, Create Assignment and the
                          course list switched off, in the browser (labconfig/) and on the server
    home/<user>/          0700, owned by the user: each person's files; the instructor's course is
                          home/<instructor>/attention/ (source/, release/, submitted/, gradebook.db, ...)

Why real Unix users (JupyterHub's LocalProcessSpawner) and not SimpleLocalProcessSpawner: every
single-user server, its kernels and its terminals run as that person's own uid. A student's code can
then open nothing of another student or of the instructor (homes are 0700: solutions, gradebook and
submissions included), and the exchange's own permissions (inbound is write-only for students) work as
nbgrader intends. SimpleLocalProcessSpawner runs everyone as the hub's user, so any student's kernel
could read every home. Hiding the instructor's tools from students (config/students/) is only
convenience; the uid is the barrier.
"""
import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from attention_course.paths import REPO_ROOT as REPO

SOLUTIONS = REPO / "solutions"
CHP = REPO / "classroom" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_ID = "attention"
DEFAULT_STATE = Path("/srv/attention-classroom")
# nbgrader's JupyterLab plugins a student must not see, and its server extensions a student does not need.
STUDENT_HIDDEN_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                          "@jupyter/nbgrader:course-list"]
STUDENT_OFF_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
# JupyterLab plugins that ask the internet (news, PyPI); a classroom behind a firewall gets a pop-up otherwise.
OFFLINE_PLUGINS = ["@jupyterlab/apputils-extension:announcements", "@jupyterlab/extensionmanager-extension:plugin"]


@dataclass
class Classroom:
    state: Path
    instructor: str
    students: list
    port: int
    hub_port: int
    proxy_api_port: int
    exchange: Path
    passwords: dict = field(default_factory=dict)
    api_token: str = ""
    course_id: str = COURSE_ID
    python: str = sys.executable
    on_submit_port: int = 0  # the on-submit service's port (classroom/on_submit_service.py); 0: not run
    lti_dir: str = ""  # the course's LTI 1.3 registration (grader/running/lti_registration.py); "": password sign-in
    crypt_key: str = ""  # JUPYTERHUB_CRYPT_KEY: the hub keeps each LTI user's launch claims encrypted

    @property
    def users(self) -> list:
        return [self.instructor, *self.students]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def home(self, user: str) -> Path:
        return self.state / "home" / user

    @property
    def course_dir(self) -> Path:
        return self.home(self.instructor) / COURSE_ID

    @property
    def settings_file(self) -> Path:
        return self.state / "classroom.json"

    def save(self):
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}
        data.update(url=self.url, course_dir=str(self.course_dir), repo=str(REPO), chp=str(CHP))
        self.settings_file.touch(mode=0o600)
        self.settings_file.chmod(0o600)  # passwords and the admin token: root only
        self.settings_file.write_text(json.dumps(data, indent=2))

    @classmethod
    def load(cls, state: Path) -> "Classroom":
        data = json.loads((Path(state) / "classroom.json").read_text())
        names = cls.__dataclass_fields__
        room = cls(**{k: v for k, v in data.items() if k in names})
        room.state, room.exchange = Path(room.state), Path(room.exchange)
        return room


# -- checks -------------------------------------------------------------------------------------

def problems() -> list:
    """What stops a classroom from starting here, one line each (empty: nothing)."""
    found = []
    if os.geteuid() != 0:
        found.append("run as root: JupyterHub starts each person's server as their own Unix user")
    if not CHP.exists():
        found.append(f"configurable-http-proxy is missing ({CHP}): run `make classroom-deps` "
                     "(npm; Node.js from Debian: apt-get install nodejs npm)")
    elif shutil.which("node") is None:
        found.append("Node.js is missing: apt-get install nodejs npm")
    if shutil.which("useradd") is None:
        found.append("useradd is missing (Debian: apt-get install passwd)")
    return found


def let_users_run_python(python: str = sys.executable) -> list:
    """Grant traverse (o+x, never read) on the folders above the course's Python that other users cannot
    cross; pyenv under /root (0700) is the usual one. Returns the folders changed."""
    changed = []
    targets = [Path(python).resolve(), Path(sys.prefix).resolve(), REPO]
    for target in targets:
        for folder in reversed(target.parents):
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                changed.append(str(folder))
    return changed


# -- users and folders -----------------------------------------------------------------------------

def ensure_user(name: str, home: Path):
    """A system user `name` with its home at `home` (0700, its own); created, or its home moved there."""
    home.mkdir(parents=True, exist_ok=True)
    try:
        entry = pwd.getpwnam(name)
        if entry.pw_dir != str(home):
            subprocess.run(["usermod", "--home", str(home), name], check=True, capture_output=True, text=True)
    except KeyError:
        # bash, so that JupyterLab's terminals work; --system: no password, no ageing, uid below 1000.
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", str(home),
                        "--shell", "/bin/bash", name], check=True, capture_output=True, text=True)
    entry = pwd.getpwnam(name)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    home.chmod(0o700)
    return entry


def chown_tree(path: Path, user: str):
    entry = pwd.getpwnam(user)
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
            os.chown(name, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def write_json(path: Path, data: dict):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_server_config(folder: Path, course_id: str, exchange: Path):
    """The configuration single-user servers read through JUPYTER_CONFIG_PATH (see jupyterhub_config.py):
    folder/common, folder/students, folder/instructor. deploy/jupyter/ is the same for Kubernetes
    (tests/test_classroom_config.py checks they agree)."""
    common, students, instructor = folder / "common", folder / "students", folder / "instructor"
    common.mkdir(parents=True, exist_ok=True)
    (common / "nbgrader_config.py").write_text(
        "# Every single-user server of the classroom (students and the instructor) reads this.\n"
        "c = get_config()\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n")
    write_json(common / "labconfig" / "page_config.json",
               {"disabledExtensions": dict.fromkeys(OFFLINE_PLUGINS, True)})
    write_json(students / "labconfig" / "page_config.json",
               {"disabledExtensions": dict.fromkeys(STUDENT_HIDDEN_PLUGINS, True)})
    write_json(students / "jupyter_server_config.json",
               {"ServerApp": {"jpserver_extensions": dict.fromkeys(STUDENT_OFF_SERVER_EXTENSIONS, False)}})
    # JupyterHub 6's single-user servers forbid all framing (frame-ancestors 'none'), which leaves JupyterLab's
    # Formgrader tab (an iframe of the same server) blank. Only the instructor's server gets 'self' back.
    write_json(instructor / "jupyter_server_config.json",
               {"ServerApp": {"tornado_settings": {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}}})
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)


def make_course_dir(room: Classroom):
    """The instructor's course: a copy of solutions/ as nbgrader's source/, a config that loads the
    course's own grader/nbgrader_config.py (so the Formgrader grades with the sandboxed pipeline of
    `python -m grader grade`), the shared exchange, and the students on the gradebook's roster.
    An existing course directory is kept (its config, gradebook, submissions and feedback); new students
    are added to its roster."""
    from grader.course import assignments, prepare_environment, write_workspace_config
    from grader.outputs.gradebook import register_students

    course = room.course_dir
    config = course / "nbgrader_config.py"
    if not config.exists():
        source = course / "source"
        for assignment in assignments():
            shutil.copytree(SOLUTIONS / assignment, source / assignment, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        write_workspace_config(course, source, f"sqlite:///{course / 'gradebook.db'}?timeout=60")
        with open(config, "a") as handle:
            handle.write(
                "# The classroom: the shared exchange and this course's id (the kernel limits are the course\n"
                "# config's defaults, grader/limits.py, the same as `grade`).\n"
                f"c.CourseDirectory.course_id = {room.course_id!r}\n"
                f"c.Exchange.root = {str(room.exchange)!r}\n"
                f"c.SandboxedExecute.kernel_log_dir = {str(course / 'logs')!r}\n")
    # The roster, also when a later run adds students (update_or_create: idempotent). It goes into the
    # course's SQLite gradebook; a course moved to PostgreSQL keeps its roster there.
    prepare_environment()
    register_students(f"sqlite:///{course / 'gradebook.db'}?timeout=60", room.students)
    chown_tree(course, room.instructor)


def prepare(room: Classroom) -> list:
    """Users, homes, exchange, configuration and course; returns notes for the console."""
    notes = []
    changed = let_users_run_python(room.python)
    if changed:
        notes.append(f"granted traverse-only permission (o+x) on {', '.join(changed)} so the course users can "
                     "run the course's Python")
    room.state.mkdir(parents=True, exist_ok=True)
    room.state.chmod(0o755)
    (room.state / "home").mkdir(exist_ok=True)
    (room.state / "home").chmod(0o755)
    hub = room.state / "hub"
    hub.mkdir(exist_ok=True)
    hub.chmod(0o700)
    for user in room.users:
        ensure_user(user, room.home(user))
        room.passwords.setdefault(user, secrets.token_urlsafe(9))
    room.api_token = room.api_token or secrets.token_hex(32)
    room.crypt_key = room.crypt_key or secrets.token_hex(32)
    if room.lti_dir:  # the score poster runs as the instructor and signs with the tool's private key
        lti = Path(room.lti_dir)
        lti.chmod(0o700)
        chown_tree(lti, room.instructor)
    # The exchange: everyone may create entries, nobody may remove another's (sticky), as nbgrader requires.
    room.exchange.mkdir(parents=True, exist_ok=True)
    room.exchange.chmod(0o1777)
    write_server_config(room.state / "config", room.course_id, room.exchange)
    make_course_dir(room)
    room.save()
    return notes


def user_processes(users) -> list:
    """(pid, user) of every live process owned by the classroom's users.

    Zombies are left out: they have exited and run nothing, and one whose parent is gone waits for the
    machine's init to reap it (in some containers init never does)."""
    uids = {}
    for user in users:
        try:
            uids[pwd.getpwnam(user).pw_uid] = user
        except KeyError:
            pass
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
                # /proc/<pid>/stat: "pid (command) state ..."; the command may contain spaces and parentheses
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if uid in uids and state != "Z":
                found.append((int(entry.name), uids[uid]))
    return found
