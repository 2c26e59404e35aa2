"""python -m classroom [--students N] [--port PORT] [--state DIR]: a local JupyterHub classroom until Ctrl-C."""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from classroom.layout import DEFAULT_STATE, REPO, Classroom, prepare, problems, user_processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def become_subreaper():
    """Orphaned descendants (a kernel whose server has gone) become our children, so we reap them rather
    than leave zombies to an init that may never reap (PR_SET_CHILD_SUBREAPER, Linux)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def settle(users, timeout: float) -> list:
    """Wait up to `timeout` s for the users' processes to end by themselves (a kernel still shutting down
    after its server stopped), reaping our orphaned children meanwhile; return those still running."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        left = user_processes(users)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def hub_up(room: Classroom) -> bool:
    try:
        with urllib.request.urlopen(f"{room.url}/hub/api/", timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def banner(room: Classroom, seconds: float) -> str:
    width = max(len(u) for u in room.users)
    rows = [f"  {'instructor' if u == room.instructor else 'student':10}  {u:{width}}  {room.passwords[u]}"
            for u in room.users]
    return "\n".join([
        f"\nThe classroom is running at {room.url}/ (ready {seconds:.0f} s after the command started)",
        f"  course id        {room.course_id}",
        f"  exchange         {room.exchange}",
        f"  course directory {room.course_dir}  (the instructor's; Formgrader: Nbgrader > Formgrader)",
        "  log in as (role, user, password):", *rows,
        f"  passwords and the admin service token: {room.settings_file} (root only)",
        "Ctrl-C stops the hub, every server it started and the proxy.\n"])


def main(argv=None) -> int:
    started = time.monotonic()
    parser = argparse.ArgumentParser(prog="python -m classroom", description=__doc__.split(":")[1].strip())
    parser.add_argument("--students", type=int, default=3, help="how many students (default 3)")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE,
                        help=f"homes, exchange, hub database (default {DEFAULT_STATE}; kept between runs)")
    parser.add_argument("--prefix", default="course-",
                        help="Unix user names are <prefix>instructor, <prefix>student1, ... (default course-)")
    parser.add_argument("--exchange", type=Path, default=None, help="the nbgrader exchange (default STATE/exchange)")
    parser.add_argument("--on-submit", action="store_true",
                        help="grade each submission as it arrives and release its feedback (a hub service; its "
                             "rules: c.SubmitPolicy in the course's nbgrader_config.py, grader/running/on_submit.py)")
    parser.add_argument("--lti", type=Path, default=None, metavar="FOLDER",
                        help="sign in from the LMS with LTI 1.3 and send scores back (needs --on-submit): FOLDER holds "
                             "lti.json and the tool's keys (python -m grader.running.lti_registration; docs/lms.md)")
    args = parser.parse_args(argv)
    if args.lti is not None:
        from grader.running.lti_registration import LtiRegistration
        try:
            LtiRegistration.load(args.lti)
        except ValueError as error:
            print(f"error: --lti: {error}", file=sys.stderr)
            return 2
        if not args.on_submit:
            print("error: --lti sends scores back from the on-submit service: add --on-submit", file=sys.stderr)
            return 2
    found = problems()
    if found:
        print("error: cannot start the classroom:\n  " + "\n  ".join(found), file=sys.stderr)
        return 2
    state = args.state.resolve()
    previous = Classroom.load(state) if (state / "classroom.json").exists() else None
    port = args.port or free_port()
    if not port_free(port):
        print(f"error: port {port} on 127.0.0.1 is taken; pass --port 0 for any free port, or another one",
              file=sys.stderr)
        return 2
    digits = len(str(args.students))
    room = Classroom(state=state, instructor=f"{args.prefix}instructor",
                     students=[f"{args.prefix}student{i:0{digits}d}" for i in range(1, args.students + 1)],
                     port=port, hub_port=free_port(), proxy_api_port=free_port(),
                     exchange=(args.exchange or state / "exchange").resolve(),
                     passwords=dict(previous.passwords) if previous else {},
                     api_token=previous.api_token if previous else "",
                     crypt_key=previous.crypt_key if previous else "",
                     lti_dir=str(args.lti.resolve()) if args.lti else "",
                     on_submit_port=free_port() if args.on_submit else 0)
    for note in prepare(room):
        print(f"note: {note}")

    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_PATH", "JUPYTER_CONFIG_DIR")}
    env.update(CLASSROOM_STATE=str(state), JUPYTERHUB_CRYPT_KEY=room.crypt_key, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    become_subreaper()
    log_path = state / "hub" / "jupyterhub.log"
    log = open(log_path, "a")
    # Its own process group, so a terminal's Ctrl-C reaches the hub only through us, once, in order.
    hub = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(REPO / "classroom" / "jupyterhub_config.py")],
                           cwd=state / "hub", env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    stopping = []

    def stop(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(f"starting JupyterHub (log: {log_path}) ...", flush=True)
    while not stopping and hub.poll() is None and not hub_up(room):
        time.sleep(0.3)
    if hub.poll() is None and not stopping:
        print(banner(room, time.monotonic() - started), flush=True)
    while not stopping and hub.poll() is None:
        time.sleep(0.5)

    code = 0
    if hub.poll() is None:
        print("stopping the classroom ...", flush=True)
        hub.send_signal(signal.SIGTERM)  # JupyterHub stops the servers (cleanup_servers) and its proxy
        try:
            hub.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)
            hub.wait()
    else:
        code = 1
        print(f"error: JupyterHub exited with {hub.returncode}; last lines of {log_path}:", file=sys.stderr)
        print("".join(open(log_path).readlines()[-30:]), file=sys.stderr)
    try:
        os.killpg(hub.pid, signal.SIGKILL)  # the proxy, should the hub have left it behind
    except ProcessLookupError:
        pass
    log.close()
    left = settle(room.users, timeout=30)
    commands = [command_line(pid) for pid, _ in left]
    for pid, user in left:  # servers the hub lost track of: only the classroom users' own processes
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    status = {"stopped": True, "leftover_processes_killed": len(left), "leftover_commands": commands}
    (state / "hub" / "last_stop.json").write_text(json.dumps(status))
    print(f"stopped{f' ({len(left)} leftover processes of the course users killed)' if left else ''}.")
    return code


if __name__ == "__main__":
    sys.exit(main())
