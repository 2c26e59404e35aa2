"""A password per person for the local classroom (JupyterHub's SharedPasswordAuthenticator lets anyone
with the one password log in as anybody, which would make the students' separation pointless)."""
from secrets import compare_digest

from jupyterhub.auth import Authenticator
from traitlets import Dict


class ClassroomAuthenticator(Authenticator):
    """Log in with the password the launcher printed for that user. For the local demo only: a real class
    logs in through the institution (OAuthenticator, LDAPAuthenticator), see docs/classroom.md."""

    passwords = Dict(help="user name -> password").tag(config=True)

    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        expected = self.passwords.get(name)
        if expected and compare_digest(str(data.get("password", "")).encode(), expected.encode()):
            return name
        return None
