"""The classroom's on-submit service: a JupyterHub managed service (classroom/jupyterhub_config.py, started
with `python -m classroom --on-submit`) that runs as the instructor in the course directory.

It grades each submission as it arrives (grader.running.on_submit.OnSubmit, in a worker thread) and serves one
page, /services/on-submit/, signed in through the hub (HubOAuth): a student sees, per assignment, the due
date, what feedback comes before it, the attempts used in the last hour and when the next is accepted
(before they submit), and each attempt's state; the instructor sees every student's attempts and the
queue. The rules are SubmitPolicy's in the course's own nbgrader_config.py (grader/running/on_submit.py).
"""
import argparse
import asyncio
import html
import json
import os
import sys
import threading
import traceback
import urllib.parse
import urllib.request
from pathlib import Path

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import web
from tornado.httpserver import HTTPServer
from traitlets.config.loader import PyFileConfigLoader

from grader.running.grading import Grader
from grader.outputs.lms_outbox import Outbox
from grader.running.lti_registration import LtiRegistration
from grader.running.on_submit import ATTEMPTS, OnSubmit, SubmitPolicy, single_service

PREFIX = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/on-submit/")
FEEDBACK_WORDS = {"full": "the whole page (score, hidden tests, named mistakes)",
                  "visible": "the visible tests' results and the mistakes they name; hidden tests after the due date",
                  "none": "none until the due date"}


def course_policy(course_dir: Path) -> SubmitPolicy:
    """SubmitPolicy as the course's nbgrader_config.py sets it (c.SubmitPolicy...)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    policy = SubmitPolicy(config=config)
    for assignment in policy.assignments:  # an override's typo is found now, with the names it may use
        policy.rules(assignment)
    return policy


def when(moment) -> str:
    return "none" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def next_time(allowed, moment) -> str:
    return "now" if allowed <= moment else f"from {when(allowed)}"


def score_text(score, max_score) -> str:
    return "" if score is None else f"{score:g} / {max_score or 0:g}"


class StatusPage(HubOAuthenticated, web.RequestHandler):
    def initialize(self, service: OnSubmit, instructors: set):
        self.service, self.instructors = service, instructors

    @web.authenticated
    def get(self):
        user = self.get_current_user()["name"]
        e = html.escape
        parts = [f"<h1>Feedback on submit</h1><p>Signed in as <strong>{e(user)}</strong>. After you submit from "
                 "the Assignments tab, your attempt is graded here; open the Assignments tab again and choose "
                 "<em>Fetch Feedback</em> to read its page in JupyterLab.</p>"]
        if user in self.instructors:
            parts.append(self.queue_html())
        else:
            for item in self.service.status(user):
                rules = item["rules"]
                parts.append(
                    f"<h2>{e(item['assignment'])}</h2><ul>"
                    f"<li>Due: {e(when(item['deadline']))}</li>"
                    f"<li>Feedback before the due date: {e(FEEDBACK_WORDS[rules.before_deadline])}</li>"
                    f"<li>Attempts: {item['used_this_hour']} of {rules.attempts_per_hour} in the last hour; at most one "
                    f"every {rules.min_gap_minutes:g} minutes; the {e(rules.counted)} attempt counts</li>"
                    f"<li>Your next attempt is accepted: <strong>{e(next_time(item['next_allowed'], item['now']))}"
                    f"</strong></li></ul>")
                rows = "".join(
                    f"<tr><td>{e(when(a['arrived_at']))}</td><td>{e(a['state'])}</td>"
                    f"<td>{score_text(a['score'], a['max_score'])}</td>"
                    f"<td>{'counts' if a['counted'] else ''}</td><td>{e(a['reason'])}</td></tr>"
                    for a in item["attempts"])
                if rows:
                    parts.append("<table><tr><th>arrived</th><th>state</th><th>score</th><th></th><th>note</th></tr>"
                                 f"{rows}</table>")
        self.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Feedback on submit</title></head>"
                   f"<body>{''.join(parts)}</body></html>")

    def queue_html(self) -> str:
        return self.attempts_html() + (self.outbox_html() if self.service.outbox is not None else "")

    def outbox_html(self) -> str:
        e = html.escape
        rows = self.service.outbox.pending()
        body = "".join(f"<tr><td>{e(r.student)}</td><td>{e(r.assignment)}</td><td>{score_text(r.score, r.max_score)}"
                       f"</td><td>{r.tries}</td><td>{e(when(r.next_try_at))}</td><td>{e(r.last_error or '')}</td></tr>"
                       for r in rows)
        return (f"<h2>Scores not yet in the LMS</h2><p>{len(rows)} pending.</p><table><tr><th>student</th>"
                f"<th>assignment</th><th>score</th><th>tries</th><th>next try</th><th>last answer</th></tr>{body}"
                "</table>")

    def attempts_html(self) -> str:
        e = html.escape
        with self.service.engine.connect() as connection:
            rows = list(connection.execute(ATTEMPTS.select().order_by(ATTEMPTS.c.arrived_at.desc()).limit(500)))
        body = "".join(f"<tr><td>{e(r.student)}</td><td>{e(r.assignment)}</td><td>{e(when(r.arrived_at))}</td>"
                       f"<td>{e(r.state)}</td><td>{score_text(r.score, r.max_score)}</td>"
                       f"<td>{e(r.released)}</td><td>{e(r.reason or '')}</td></tr>" for r in rows)
        waiting = sum(r.state in ("waiting", "grading") for r in rows)
        return (f"<h2>Every attempt (instructor)</h2><p>{waiting} waiting or being graded.</p><table><tr><th>student"
                "</th><th>assignment</th><th>arrived</th><th>state</th><th>score</th><th>released</th><th>note</th>"
                f"</tr>{body}</table>")


class ToolKeys(web.RequestHandler):
    """The tool's public key set (JWKS), which the LMS fetches to check the tool's grade-service requests."""

    def initialize(self, jwks: dict):
        self.jwks = jwks

    def get(self):
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps(self.jwks))


def hub_launches(student: str):
    """The claims of `student`'s last LMS launch, from the hub's auth_state (None if none)."""
    url = f"{os.environ['JUPYTERHUB_API_URL'].rstrip('/')}/users/{urllib.parse.quote(student, safe='')}"
    request = urllib.request.Request(url, headers={"Authorization": f"token {os.environ['JUPYTERHUB_API_TOKEN']}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return (json.loads(response.read()).get("auth_state") or None)


def grade_forever(service: OnSubmit, course: Path, stop: threading.Event):
    """The grading loop: a failure is logged and the loop goes on (a broken submission stops no other). An
    instructor's change of c.SubmitPolicy in the course's nbgrader_config.py applies from the next poll."""
    config, seen = course / "nbgrader_config.py", None
    while not stop.is_set():
        try:
            if config.stat().st_mtime != seen:
                seen = config.stat().st_mtime
                service.policy = course_policy(course)
            service.poll(wait=False)
        except Exception:  # noqa: BLE001 (logged; the next poll tries again)
            service.log("on-submit: poll failed:\n" + traceback.format_exc()[-3000:])
        stop.wait(service.policy.poll_seconds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m classroom.on_submit_service", description=__doc__.split("\n")[0])
    parser.add_argument("--course-dir", type=Path, required=True, help="the instructor's course directory")
    parser.add_argument("--exchange", type=Path, required=True, help="nbgrader's exchange root")
    parser.add_argument("--instructor", action="append", default=[], help="who sees every attempt (repeatable)")
    parser.add_argument("--workers", type=int, default=None, help="notebooks graded at once (default: cores)")
    parser.add_argument("--lti", type=Path, default=None, metavar="FOLDER",
                        help="the course's LTI registration: counted scores go to the LMS (grader/outputs/lms_outbox.py)")
    args = parser.parse_args(argv)
    course = args.course_dir.resolve()
    grader = Grader(course / "on_submit", course / "source", workers=args.workers,
                    db_url=f"sqlite:///{course / 'gradebook.db'}?timeout=60", exchange=args.exchange)
    lock = single_service(grader.workspace)  # noqa: F841 (held for the life of the process)
    registration = LtiRegistration.load(args.lti) if args.lti else None
    outbox = Outbox(grader.db_url, registration, hub_launches, log=lambda message: print(message, file=sys.stderr,
                                                                                          flush=True)) \
        if registration else None
    service = OnSubmit(grader, args.exchange, course_policy(course), outbox=outbox)
    stop = threading.Event()
    threading.Thread(target=grade_forever, args=(service, course, stop), daemon=True, name="on-submit").start()
    app = web.Application([
        (PREFIX, StatusPage, {"service": service, "instructors": set(args.instructor)}),
        (url_path_join(PREFIX, "oauth_callback"), HubOAuthCallbackHandler),
        *([(url_path_join(PREFIX, "jwks"), ToolKeys, {"jwks": registration.public_jwks()})] if registration else []),
    ], cookie_secret=os.urandom(32))
    url = os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101")
    host_port = url.split("//", 1)[1].rstrip("/")
    HTTPServer(app).listen(int(host_port.rsplit(":", 1)[1]), host_port.rsplit(":", 1)[0])
    print(f"on-submit: grading {args.exchange} into {grader.workspace}; status page at {PREFIX}", flush=True)
    try:
        asyncio.get_event_loop().run_forever()
    finally:
        stop.set()
        service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
