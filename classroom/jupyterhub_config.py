# JupyterHub configuration of the local classroom. `python -m classroom` prepares the state folder
# (classroom/layout.py) and runs `jupyterhub -f classroom/jupyterhub_config.py` with CLASSROOM_STATE set.
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the hub imports classroom.auth

from classroom.layout import CHP, COURSE_ID, Classroom  # noqa: E402

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
room = Classroom.load(Path(os.environ["CLASSROOM_STATE"]))
hub_state = room.state / "hub"
config_dir = room.state / "config"

# Localhost only: the public proxy port, the hub behind it and the proxy's API.
c.JupyterHub.bind_url = room.url
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{room.hub_port}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{room.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [str(CHP)]  # the pinned copy from classroom/package.json
c.JupyterHub.db_url = f"sqlite:///{hub_state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(hub_state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(hub_state / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # Ctrl-C stops every single-user server too

# One password per person (printed by the launcher). A shared password would let any student log in as any
# other; for a real class use the university's login instead (docs/classroom.md: OAuthenticator, LDAPAuthenticator).
c.JupyterHub.authenticator_class = "classroom.auth.ClassroomAuthenticator"
c.ClassroomAuthenticator.passwords = room.passwords
c.Authenticator.allowed_users = set(room.users)

# nbgrader's convention for a course on a hub: formgrade-<course> for its graders, nbgrader-<course> for its
# students (nbgrader's JupyterHubAuthPlugin reads these when one hub serves several courses).
c.JupyterHub.load_groups = {
    f"formgrade-{COURSE_ID}": {"users": [room.instructor]},
    f"nbgrader-{COURSE_ID}": {"users": list(room.students)},
}
# A service for scripts and tests (the load test): start servers and make tokens for the classroom's users.
# It is not given to people; its token is in classroom.json, readable by root only.
c.JupyterHub.services = [{"name": "classroom-admin", "api_token": room.api_token}]
c.JupyterHub.load_roles = [{
    "name": "classroom-admin",
    "description": "Start and stop the classroom's servers, issue their tokens",
    "scopes": ["admin:users", "admin:servers", "tokens", "list:users", "read:users", "list:groups", "read:groups"],
    "services": ["classroom-admin"],
}]

# Sign-in from the LMS (python -m classroom --lti FOLDER): LTI 1.3, checked against the course's registration
# (classroom/lti_auth.py); the roster stays the hub's allowed users, and its instructor the only one a launch
# may make an instructor.
if room.lti_dir:
    from classroom.lti_auth import ClassroomLTIAuthenticator  # noqa: E402
    from grader.course import assignments as course_assignments  # noqa: E402
    from grader.running.lti_registration import LtiRegistration  # noqa: E402

    registration = LtiRegistration.load(room.lti_dir)
    c.JupyterHub.authenticator_class = ClassroomLTIAuthenticator
    c.ClassroomLTIAuthenticator.registration_dir = room.lti_dir
    c.ClassroomLTIAuthenticator.issuer = registration.issuer
    c.ClassroomLTIAuthenticator.client_id = {registration.client_id}
    c.ClassroomLTIAuthenticator.authorize_url = registration.authorize_url
    c.ClassroomLTIAuthenticator.jwks_endpoint = registration.jwks_url
    c.ClassroomLTIAuthenticator.username_key = registration.username_claim
    c.ClassroomLTIAuthenticator.instructors = {room.instructor}
    c.ClassroomLTIAuthenticator.assignments = course_assignments()
    c.Authenticator.enable_auth_state = True  # the launch's claims, for the score poster (JUPYTERHUB_CRYPT_KEY)

    async def open_launched_assignment(authenticator, handler, authentication):
        """Fetch the assignment the link names into the student's home, as the student, once it is released."""
        name = authentication["name"]
        assignment = authenticator.assignment_of(authentication.get("auth_state") or {})
        if assignment and name in room.students and not (room.home(name) / assignment).exists() and \
                (room.exchange / room.course_id / "outbound" / assignment).is_dir():
            paths = os.pathsep.join(str(config_dir / part) for part in ("students", "common"))
            fetch = await asyncio.create_subprocess_exec(
                "runuser", "-u", name, "--", "env", f"HOME={room.home(name)}", f"JUPYTER_CONFIG_PATH={paths}",
                room.python, "-m", "nbgrader", "fetch_assignment", assignment, cwd=str(room.home(name)),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
            await fetch.wait()
        return authentication

    c.Authenticator.post_auth_hook = open_launched_assignment

# Feedback on submit (python -m classroom --on-submit): a managed service that runs as the instructor in the
# course directory, grades each submission as it arrives and serves each person's status page.
if room.on_submit_port:
    c.JupyterHub.services.append({
        "name": "on-submit",
        "display": True,
        "oauth_no_confirm": True,
        "url": f"http://127.0.0.1:{room.on_submit_port}",
        "user": room.instructor,
        "cwd": str(room.course_dir),
        "command": [room.python, "-m", "classroom.on_submit_service", "--course-dir", str(room.course_dir),
                    "--exchange", str(room.exchange), "--instructor", room.instructor,
                    *(["--lti", room.lti_dir] if room.lti_dir else [])],
        "environment": {"PYTHONPATH": str(Path(__file__).resolve().parent.parent),
                        "PATH": f"{Path(room.python).parent}:/usr/local/bin:/usr/bin:/bin",
                        "HOME": str(room.home(room.instructor))},
    })
    c.JupyterHub.load_roles.append({  # the launch claims of each user, for the score poster
        "name": "on-submit",
        "description": "Read each user's LMS launch claims (auth_state)",
        "scopes": ["read:users", "admin:auth_state"],
        "services": ["on-submit"],
    })
    c.JupyterHub.load_roles.append({
        "name": "on-submit-users",
        "description": "Open the on-submit service's status page",
        "scopes": ["self", "access:services!service=on-submit"],
        "groups": [f"nbgrader-{COURSE_ID}", f"formgrade-{COURSE_ID}"],
    })

# Every person's server runs as their own Unix user (see classroom/layout.py for why).
c.JupyterHub.spawner_class = "localprocess"
venv_bin = str(Path(room.python).parent)
c.Spawner.cmd = [os.path.join(venv_bin, "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
# Many servers starting at once share two cores (the load test starts thirty): be patient.
c.Spawner.start_timeout = 600
c.Spawner.http_timeout = 600
# On Ctrl-C each server stops its kernels before it exits; on a busy machine that takes longer than the
# default 10 s, after which the hub would kill the server and orphan its kernels.
c.LocalProcessSpawner.interrupt_timeout = 30
c.JupyterHub.concurrent_spawn_limit = 100
c.Spawner.environment = {
    "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
}


def per_role_config(spawner):
    """Which Jupyter configuration a server reads: JUPYTER_CONFIG_PATH puts the role's folder first.

    - instructor: the course directory (its nbgrader_config.py: source/, the gradebook, the sandboxed
      grading of grader/nbgrader_config.py), config/instructor (the Formgrader's tab), then common;
    - students: config/students (no Formgrader, no Create Assignment, no course list), then common.
    """
    if spawner.user.name == room.instructor:
        paths = [room.course_dir, config_dir / "instructor", config_dir / "common"]
    else:
        paths = [config_dir / "students", config_dir / "common"]
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(str(p) for p in paths)


c.Spawner.pre_spawn_hook = per_role_config
