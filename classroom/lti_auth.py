"""Sign-in from the LMS (LTI 1.3): jupyterhub-ltiauthenticator's LTI13Authenticator with what a class needs
and it leaves out (checked against the course's registration, grader/running/lti_registration.py):

- a launch from a deployment the course is not registered for is refused;
- an id_token is accepted once: its nonce is remembered until the token's age limit has passed, so a launch
  replayed with the browser's captured cookies is refused (the package checks the nonce only against a
  cookie);
- the hub user name comes from the registration's username claim only (never a fallback to `sub`), must be a
  valid course id (grader/intake/student_ids.py) and on the classroom's roster (the hub's allowed users);
- a launch whose roles claim holds an instructor role is refused unless its user is the roster's instructor:
  the roster, not a claim in a launch, says who grades;
- after sign-in the browser goes to the assignment the link names (the registration's assignment claim),
  open in JupyterLab; never to the login initiation's target_link_uri, which anyone can set;
- every refusal is a page that says why and what to do (start again from the LMS), status 403 or 400.
The claims the score poster needs (the user's LMS id and grade-services end-point) are kept in the user's
auth_state (grader/outputs/lms_outbox.py reads them through the hub's API).
"""
import time

from jupyterhub.utils import url_path_join
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.constants import LTI13_CUSTOM_CLAIM
from ltiauthenticator.lti13.error import ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado.web import HTTPError
from traitlets import Integer, List, Set, Unicode

from grader.intake import student_ids
from grader.running.lti_registration import AGS_CLAIM, DEPLOYMENT_CLAIM, INSTRUCTOR_ROLES, ROLES_CLAIM, LtiRegistration

AGAIN = "Open the course again from its link in your LMS."
KEPT_CLAIMS = ("iss", "sub", "aud", AGS_CLAIM, ROLES_CLAIM, DEPLOYMENT_CLAIM, LTI13_CUSTOM_CLAIM,
               "https://purl.imsglobal.org/spec/lti/claim/context",
               "https://purl.imsglobal.org/spec/lti/claim/resource_link")


class ClassroomLTICallbackHandler(LTI13CallbackHandler):
    """The launch (the platform's form post of the id_token), with the course's own checks."""

    _launch = None

    def decode_and_validate_launch_request(self):
        try:
            claims = super().decode_and_validate_launch_request()
        except ValidationError as error:
            raise HTTPError(401 if "audience" in str(error).lower() else 400,
                            f"The sign-in from the LMS was refused: {error}. {AGAIN}") from None
        except HTTPError as error:
            raise HTTPError(error.status_code,
                            f"The sign-in from the LMS was refused: {error.log_message}. {AGAIN}") from None
        self.authenticator.check_launch(claims)
        self._launch = claims
        return claims

    def get_next_url(self, user=None):
        return self.authenticator.landing(self._launch or {}, self.hub.base_url)


class ClassroomLTIAuthenticator(LTI13Authenticator):
    callback_handler = ClassroomLTICallbackHandler

    registration_dir = Unicode(help="The folder of the course's lti.json and the tool's keys "
                                    "(grader/running/lti_registration.py)").tag(config=True)
    instructors = Set(Unicode(), help="Hub user names a launch may make instructors (the roster's)"
                      ).tag(config=True)
    assignments = List(Unicode(), help="The course's assignments a link may open").tag(config=True)
    max_age_seconds = Integer(600, help="How long an id_token's nonce is remembered (the package's age limit "
                                        "for an id_token)").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._nonces = {}  # nonce -> when it may be forgotten (monotonic seconds)
        self._registration = None

    @property
    def registration(self) -> LtiRegistration:
        if self._registration is None:
            self._registration = LtiRegistration.load(self.registration_dir)
        return self._registration

    def check_launch(self, claims: dict):
        deployment = claims.get(DEPLOYMENT_CLAIM)
        if deployment not in self.registration.deployment_ids:
            raise HTTPError(403, f"This launch comes from the LMS deployment {str(deployment)[:100]!r}, which this "
                                 f"course is not registered for. Ask your instructor to check the course's LTI "
                                 f"registration.")
        clock = time.monotonic()
        self._nonces = {nonce: until for nonce, until in self._nonces.items() if until > clock}
        nonce = str(claims.get("nonce"))
        if nonce in self._nonces:
            raise HTTPError(403, f"This sign-in was used already (the same launch sent twice). {AGAIN}")
        self._nonces[nonce] = clock + self.max_age_seconds

    def landing(self, claims: dict, hub_base: str) -> str:
        """JupyterLab with the assignment the link names open (the notebook fetched by the post-auth hook)."""
        assignment = self.assignment_of(claims)
        if assignment:
            return url_path_join(hub_base, "user-redirect", "lab", "tree", assignment, f"{assignment}.ipynb")
        return url_path_join(hub_base, "user-redirect", "lab")

    def assignment_of(self, claims: dict) -> str:
        key = self.registration.assignment_claim.removeprefix("custom_")
        custom = claims.get(LTI13_CUSTOM_CLAIM)
        name = custom.get(key) if isinstance(custom, dict) else None
        return name if isinstance(name, str) and name in self.assignments else ""

    async def authenticate(self, handler, data=None):
        claims = data or {}
        key = self.registration.username_claim
        custom = claims.get(LTI13_CUSTOM_CLAIM)
        name = (custom.get(key.removeprefix("custom_")) if isinstance(custom, dict) else None) \
            if key.startswith("custom_") else claims.get(key)
        if not isinstance(name, str) or not name:
            raise HTTPError(403, f"The LMS sent no user name ({key}) with this launch: the course's tool needs it "
                                 "set in the LMS (see the course's LMS instructions).")
        problem = student_ids.problem(name)
        if problem:
            raise HTTPError(403, f"The LMS's user name cannot be used here: {problem}")
        roles = claims.get(ROLES_CLAIM) if isinstance(claims.get(ROLES_CLAIM), list) else []
        if any(role in INSTRUCTOR_ROLES for role in roles) and name not in self.instructors:
            raise HTTPError(403, f"The LMS says {name} teaches this course, but this course's roster has {name} as a "
                                 "student here, so the sign-in was refused. Ask the instructor if that is wrong.")
        return {"name": name, "auth_state": {claim: claims.get(claim) for claim in KEPT_CLAIMS}}
