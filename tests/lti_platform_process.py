"""The LTI 1.3 test platform (tests/lti_platform.py, built on lti1p3platform) as a process on a free localhost
port, with the course's registration made to match it: for the outbox's tests and the classroom's LTI test."""
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from grader.running.lti_registration import LtiRegistration

HERE = Path(__file__).resolve().parent
CLIENT_ID = "jupyterhub-attention-course"
DEPLOYMENT_ID = "attention-course-deployment-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Platform:
    """Start with start(tool_url); `registration` is the course's lti.json for it (keys in `folder`/lti)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.registration = LtiRegistration(issuer=self.url, client_id=CLIENT_ID, deployment_ids=[DEPLOYMENT_ID],
                                            authorize_url=f"{self.url}/authorize", jwks_url=f"{self.url}/jwks",
                                            token_url=f"{self.url}/token")
        self.registration.save(self.folder / "lti")
        self.process = None

    def start(self, tool_url: str = "http://127.0.0.1:9/hub/lti13", tool_jwks_url: str = None):
        """`tool_jwks_url`: the tool's key set as the platform fetches it (else the registration's public key)."""
        self.log = open(self.folder / "platform.log", "a")
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "lti_platform.py"), "--port", str(self.port), "--tool-url", tool_url,
             "--state", str(self.folder / "platform"), "--client-id", CLIENT_ID,
             *(["--tool-jwks-url", tool_jwks_url] if tool_jwks_url else
               ["--tool-public-key", str(self.folder / "lti" / "tool_public.pem")])],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/jwks", timeout=2).read()
                return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError((self.folder / "platform.log").read_text()[-2000:])
                time.sleep(0.2)
        raise RuntimeError("the LTI platform did not start in 60 s")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        if self.process:
            self.log.close()

    def gradebook(self) -> dict:
        return json.loads(urllib.request.urlopen(f"{self.url}/gradebook.json", timeout=10).read())

    def scores(self) -> dict:
        """{(LMS user id, line item label): score given}"""
        return {(row["userId"], row["lineitem"]): row["scoreGiven"] for row in self.gradebook()["scores"]}

    @property
    def private_key(self) -> str:
        """The platform's signing key (a test re-signs id_tokens with changed claims)."""
        return (self.folder / "platform" / "platform_private.pem").read_text()

    def set_down(self, down: bool):
        data = f"down={1 if down else 0}".encode()
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/admin/ags", data=data, method="POST"), timeout=10)

    def ags_claims(self, sub: str) -> dict:
        """What a launch of this platform gives the tool for grade services (the AGS claim and the user's id)."""
        from grader.running.lti_registration import AGS_CLAIM, AGS_SCOPES

        return {"sub": sub, AGS_CLAIM: {"scope": AGS_SCOPES, "lineitems": f"{self.url}/lineitems"}}
