"""The course's LTI 1.3 registration with its LMS, in one place: one JSON file and the tool's key pair beside it.

Read by the hub's sign-in (classroom/auth.py: ClassroomLTIAuthenticator, through classroom/jupyterhub_config.py)
and by the score poster (grader/outputs/lms_outbox.py: pylti1p3's Assignment and Grade Services); the tool's public
key set is served by the on-submit service at /services/on-submit/jwks for the LMS to fetch.

    {
      "issuer": "https://canvas.instructure.com",          the platform's iss (Canvas: fixed; Moodle: its URL)
      "client_id": "10000000000001",                       what the LMS gave the tool when it was registered
      "deployment_ids": ["1:abc..."],                      the deployments launches may come from
      "authorize_url": "https://.../api/lti/authorize_redirect",   the platform's OIDC authorization end-point
      "jwks_url": "https://.../api/lti/security/jwks",     the platform's public key set
      "token_url": "https://.../login/oauth2/token",       the platform's OAuth2 token end-point (AGS)
      "username_claim": "custom_username",                 the claim the hub user name comes from
      "assignment_claim": "custom_assignment"              the claim naming the assignment a link opens
    }

`python -m grader.running.lti_registration FOLDER --issuer ... ` writes the file and makes the key pair
(tool_private.pem 0600, tool_public.pem).
"""
import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

FILE = "lti.json"
PRIVATE_KEY, PUBLIC_KEY = "tool_private.pem", "tool_public.pem"
# IMS LIS v2 roles that make a launch an instructor's (context roles and their short forms)
INSTRUCTOR_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
                    "http://purl.imsglobal.org/vocab/lis/v2/membership#ContentDeveloper",
                    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
                    "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator",
                    "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator",
                    "Instructor", "ContentDeveloper", "TeachingAssistant", "Administrator")
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
AGS_SCOPES = ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
              "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
              "https://purl.imsglobal.org/spec/lti-ags/scope/score"]


@dataclass
class LtiRegistration:
    issuer: str
    client_id: str
    deployment_ids: list
    authorize_url: str
    jwks_url: str
    token_url: str
    username_claim: str = "custom_username"
    assignment_claim: str = "custom_assignment"
    folder: Path = field(default=None, repr=False)

    @classmethod
    def load(cls, folder: Path) -> "LtiRegistration":
        path = Path(folder) / FILE
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read the LTI registration {path}: {error}") from None
        names = [name for name in cls.__dataclass_fields__ if name != "folder"]
        unknown, missing = sorted(set(data) - set(names)), [n for n in names[:6] if not data.get(n)]
        if unknown or missing:
            raise ValueError(f"{path}: " + "; ".join(
                ([f"unknown {', '.join(unknown)}"] if unknown else []) + ([f"missing {', '.join(missing)}"]
                                                                           if missing else []))
                             + f" (fields: {', '.join(names)})")
        return cls(**data, folder=Path(folder))

    def save(self, folder: Path):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        data = {k: v for k, v in asdict(self).items() if k != "folder"}
        (folder / FILE).write_text(json.dumps(data, indent=2) + "\n")
        self.folder = folder
        if not (folder / PRIVATE_KEY).exists():
            make_key_pair(folder)

    @property
    def private_key(self) -> str:
        return (self.folder / PRIVATE_KEY).read_text()

    @property
    def public_key(self) -> str:
        return (self.folder / PUBLIC_KEY).read_text()

    def tool_conf(self):
        """pylti1p3's registration of this tool with the platform (for its ServiceConnector)."""
        from pylti1p3.tool_config import ToolConfDict

        conf = ToolConfDict({self.issuer: [{
            "default": True, "client_id": self.client_id, "auth_login_url": self.authorize_url,
            "auth_token_url": self.token_url, "auth_audience": None, "key_set_url": self.jwks_url,
            "deployment_ids": list(self.deployment_ids)}]})
        conf.set_private_key(self.issuer, self.private_key, client_id=self.client_id)
        conf.set_public_key(self.issuer, self.public_key, client_id=self.client_id)  # gives the assertion its kid
        return conf

    def public_jwks(self) -> dict:
        """The tool's public key set, as the LMS fetches it (Canvas: "Public JWK URL"; Moodle: "Public keyset")."""
        from pylti1p3.registration import Registration

        return {"keys": [Registration.get_jwk(self.public_key)]}


def make_key_pair(folder: Path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = folder / PRIVATE_KEY
    private.touch(mode=0o600)
    private.chmod(0o600)
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    (folder / PUBLIC_KEY).write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.running.lti_registration", description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help=f"where {FILE} and the tool's key pair go")
    for name in ("issuer", "client_id", "authorize_url", "jwks_url", "token_url"):
        parser.add_argument(f"--{name.replace('_', '-')}", required=True)
    parser.add_argument("--deployment-id", action="append", required=True, dest="deployment_ids")
    parser.add_argument("--username-claim", default="custom_username")
    parser.add_argument("--assignment-claim", default="custom_assignment")
    args = vars(parser.parse_args(argv))
    folder = args.pop("folder")
    LtiRegistration(**args).save(folder)
    print(f"wrote {folder / FILE} and the tool's key pair ({folder / PUBLIC_KEY} is the public one)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
