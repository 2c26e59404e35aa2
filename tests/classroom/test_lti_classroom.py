"""The class loop closed, against an LTI 1.3 platform this project did not write (tests/lti_platform.py, built
on lti1p3platform), in headless Chromium: the platform launches a student into the classroom's hub
(`python -m classroom --on-submit --lti FOLDER`), JupyterLab opens the assignment the link names, the student
submits from the Assignments list, fetches the feedback page there and reads it, and the platform's gradebook
gets the score from the on-submit service's outbox; with the platform's grade services down the score waits
(listed on the instructor's page) and arrives once they are back. Forged, replayed, wrong-audience, expired
and wrong-deployment launches, and a student's launch claiming the instructor role, are refused with a page
that says why."""
import re
import subprocess
import sys
import time
from urllib.parse import urlencode

import jwt
import nbformat
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from grader.running.lti_registration import DEPLOYMENT_CLAIM
from grader.authoring.samples import fill_answers
from tests.browser.lab import CHROMIUM, INSTALL_HINT, Shots
from tests.classroom.hub import request
from tests.classroom.test_classroom_term import UserServer, chromium, click_in_list, open_assignments
from tests.exchange_class import shared_folder
from tests.lti_platform_process import Platform, free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.classroom]

ASSIGNMENT = "02_three_stage_attention"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
POLICY = ('\n# The LTI test: every attempt\'s whole page at once (so its score goes to the LMS at once), no gap.\n'
          'c.SubmitPolicy.before_deadline = "full"\nc.SubmitPolicy.min_gap_minutes = 0\n')


@pytest.fixture(autouse=True)
def _needs_chromium():
    if not CHROMIUM.exists():
        pytest.skip(INSTALL_HINT)


def launch_url(platform, user: str, role: str = "learner") -> str:
    query = urlencode({"user": user, "role": role, "resource": f"link-{ASSIGNMENT}", "assignment": ASSIGNMENT})
    return f"{platform.url}/launch?{query}"


def until_form(platform, user: str, role: str = "learner"):
    """A launch followed as a browser would, up to the platform's form post of the id_token: (session, form)."""
    session = requests.Session()
    page = session.get(launch_url(platform, user, role), timeout=60)
    action = re.search(r'<form[^>]*action="([^"]+)"', page.text).group(1)
    fields = dict(re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page.text))
    return session, action, fields


def refusal(response) -> str:
    """The hub's error page as the reader sees it."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.text).split())


def resigned(platform, session, action, fields, change, key: str = None):
    claims = jwt.decode(fields["id_token"], options={"verify_signature": False})
    change(claims)
    header = jwt.get_unverified_header(fields["id_token"])
    token = jwt.encode(claims, key or platform.private_key, algorithm="RS256", headers={"kid": header["kid"]})
    return session.post(action, data={**fields, "id_token": token}, allow_redirects=False, timeout=60)


@pytest.fixture
def lti_folder():
    """The platform's state and the course's registration; the instructor (the score poster) must reach it."""
    with shared_folder("lti-") as folder:
        yield folder


def test_a_student_launched_from_the_lms_submits_reads_feedback_and_the_lms_gets_the_score(start_classroom,
                                                                                          lti_folder):
    tmp_path = lti_folder
    shots = Shots("lti_classroom")
    hub_port = free_port()
    platform = Platform(tmp_path).start(tool_url=f"http://127.0.0.1:{hub_port}/hub/lti13",
                                        tool_jwks_url=f"http://127.0.0.1:{hub_port}/services/on-submit/jwks")
    try:
        hub = start_classroom("clt-", students=2, options=["--on-submit", "--lti", str(tmp_path / "lti"),
                                                           "--port", str(hub_port)])
        room = hub.room
        instructor, (ada, bob) = room.instructor, room.students
        course = room.course_dir
        with open(course / "nbgrader_config.py", "a") as config:
            config.write(POLICY)
        for step in (["generate_assignment", ASSIGNMENT, "--force"], ["release_assignment", ASSIGNMENT, "--force"]):
            run = subprocess.run(["runuser", "-u", instructor, "--", "env", f"HOME={room.home(instructor)}",
                                  sys.executable, "-m", "nbgrader", *step], cwd=course, capture_output=True,
                                 text=True)
            assert run.returncode == 0, run.stderr[-2000:]
        source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)

        with chromium(shots) as browser:
            page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
            page.set_default_timeout(300_000)
            page.goto(launch_url(platform, ada))  # the LMS's link: platform -> hub -> JupyterLab
            page.wait_for_url(re.compile(rf".*/user/{ada}/lab/tree/{re.escape(NOTEBOOK)}"), timeout=600_000)
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=300_000)
            shots(page, "ada_launched_into_the_assignment")
            server = UserServer(hub, ada)
            fetched = nbformat.from_dict(server.api(f"contents/{NOTEBOOK}")["content"])
            server.api(f"contents/{NOTEBOOK}", "PUT", {"type": "notebook", "format": "json",
                                                      "content": fill_answers(fetched, source, 1.0)})
            panel = open_assignments(page)
            submitted = time.monotonic()
            click_in_list(page, panel, "fetched_assignments_list", "Submit", then="submitted_assignments_list")
            shots(page, "ada_submitted")
            status_url = f"{hub.url}/services/on-submit/"
            deadline = time.monotonic() + 600
            while "<td>graded</td>" not in (status := request(status_url, hub.token(ada))) and \
                    time.monotonic() < deadline:
                time.sleep(2)
            assert "<td>graded</td>" in status, status[-1500:]
            print(f"graded {time.monotonic() - submitted:.1f} s after Submit")
            panel = open_assignments(page)
            row = panel.locator(f"#submitted_assignments_list .list_item:has-text('{ASSIGNMENT}')").first
            row.locator("button:text-is('Fetch Feedback')").click()
            row.locator("a:has-text('view feedback')").first.wait_for(timeout=120_000)
            stamps = server.api(f"contents/{ASSIGNMENT}/feedback")["content"]
            page.goto(server.url(f"files/{stamps[0]['path']}/{ASSIGNMENT}.html"))
            body = page.locator("body").inner_text()
            shots(page, "ada_feedback")
            assert "Every exercise passed its tests." in body
            total = float(re.search(rf"{ASSIGNMENT} \(Score: ([\d.]+) / ([\d.]+)\)", body).group(2))

            deadline = time.monotonic() + 120
            while (platform.scores().get((f"sub-{ada}", ASSIGNMENT)) is None) and time.monotonic() < deadline:
                time.sleep(1)
            assert platform.scores()[f"sub-{ada}", ASSIGNMENT] == total
            print(f"in the LMS gradebook {time.monotonic() - submitted:.1f} s after Submit")

            # The platform's grade services go down: bob's score waits, listed for the instructor, then arrives.
            platform.set_down(True)
            bob_page = browser.new_context().new_page()
            bob_page.set_default_timeout(300_000)
            bob_page.goto(launch_url(platform, bob))
            bob_page.wait_for_url(re.compile(rf".*/user/{bob}/lab/tree/.*"), timeout=600_000)
            bob_server = UserServer(hub, bob)
            fetched = nbformat.from_dict(bob_server.api(f"contents/{NOTEBOOK}")["content"])
            bob_server.api(f"contents/{NOTEBOOK}", "PUT", {"type": "notebook", "format": "json",
                                                          "content": fill_answers(fetched, source, 0.5)})
            click_in_list(bob_page, open_assignments(bob_page), "fetched_assignments_list", "Submit",
                          then="submitted_assignments_list")
            # the instructor signs in from the LMS too, and sees the score pending with the LMS's answer
            teacher = browser.new_context().new_page()
            teacher.goto(launch_url(platform, instructor, "instructor"))
            teacher.wait_for_url(re.compile(rf".*/user/{instructor}/lab.*"), timeout=600_000)
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                teacher.goto(status_url)
                text = teacher.locator("body").inner_text()
                if re.search(rf"{bob}\s+{ASSIGNMENT}.*503", text):
                    break
                time.sleep(3)
            shots(teacher, "instructor_sees_a_pending_score")
            assert "Scores not yet in the LMS" in text and re.search(rf"{bob}\s+{ASSIGNMENT}.*503", text), text[-2000:]
            assert (f"sub-{bob}", ASSIGNMENT) not in platform.scores()
            platform.set_down(False)
            deadline = time.monotonic() + 180  # the first retry comes 30 s after the failure, the next 60 s later
            while (f"sub-{bob}", ASSIGNMENT) not in platform.scores() and time.monotonic() < deadline:
                time.sleep(2)
            assert 0 < platform.scores()[f"sub-{bob}", ASSIGNMENT] < total

            # A student's launch claiming the instructor role: refused with a page that says why.
            mallory = browser.new_context().new_page()
            response = mallory.goto(launch_url(platform, bob, "instructor"))
            mallory.wait_for_load_state()
            text = mallory.locator("body").inner_text()
            shots(mallory, "student_claiming_instructor_refused")
            assert "teaches this course, but this course's roster has" in text, text[:1000]
            assert f"/user/{bob}/" not in mallory.url and response is not None

        # Launches the hub must refuse, each after a real login initiation; the page says why.
        other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        now = int(time.time())
        cases = {
            "forged": (lambda c: None, other_key, "Signature verification failed"),
            "wrong audience": (lambda c: c.update(aud="another-tool", azp="another-tool"), None, "Audience"),
            "expired": (lambda c: c.update(exp=now - 60, iat=now - 360), None, "Signature has expired"),
            "wrong deployment": (lambda c: c.update({DEPLOYMENT_CLAIM: "another-deployment"}), None,
                                 "is not registered for"),
        }
        for name, (change, key, reason) in cases.items():
            session, action, fields = until_form(platform, ada)
            response = resigned(platform, session, action, fields, change, key)
            assert response.status_code in (400, 401, 403), (name, response.status_code)
            shown = refusal(response)
            assert reason in shown and "Open the course again from its link in your LMS" in shown or \
                "not registered for" in shown, (name, shown[:600])
        session, action, fields = until_form(platform, ada)
        cookies = session.cookies.get_dict()  # captured before the first post, as an attacker could
        first = session.post(action, data=fields, allow_redirects=False, timeout=60)
        assert first.status_code == 302
        replayed = requests.post(action, data=fields, cookies=cookies, allow_redirects=False, timeout=60)
        assert replayed.status_code == 403 and "used already" in refusal(replayed), refusal(replayed)[:600]
    finally:
        platform.stop()
