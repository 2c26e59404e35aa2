"""A tiny LTI 1.3 platform (the LMS side) for end-to-end tests of a JupyterHub that uses
jupyterhub-ltiauthenticator's LTI13Authenticator, built on the PyPI package lti1p3platform 0.1.8.

    python platform_app.py --port P --tool-url http://127.0.0.1:T/hub/lti13 --state DIR
        [--tool-public-key FILE | --tool-jwks-url URL] [--client-id ID] [--target-link-uri URL]

One course, one registered tool, one deployment. Endpoints:
  /jwks                      platform public key set (lti1p3platform: Registration.get_jwks)
  /launch?user=&role=&resource=   third-party initiated login towards the tool (redirect)
  /authorize                 OIDC authorization endpoint: answers with an auto-submitting form_post
  /token                     OAuth2 client_credentials with a JWT client assertion (AGS access tokens)
  /lineitems, /lineitems/<id>, /lineitems/<id>/scores, /lineitems/<id>/results    AGS 2.0
  /gradebook, /gradebook.json    what arrived, for people and for tests
  /admin/ags   GET -> {"down": bool}; POST down=1|0: /token and /scores answer 503 while down
               (the same switch is the file DIR/AGS_DOWN: touch it / remove it)

What lti1p3platform does here: the Registration (keys, kid, JWKS, signing), the OIDC preflight URL
(OIDCLoginAbstract.prepare_preflight_url), preflight-response checks and id_token building/signing
(LTIAdvantageMessageLaunchAbstract: claims setters, set_ags, nonce/state echo, RS256 + kid), the launch
form template, the access-token grant (LTI1P3PlatformConfAbstract.get_access_token: JWT assertion checked
against the tool's key set, scopes filtered, RS256 access token) and the AGS request handling
(service_connector.AssignmentsGradesService: bearer-token + scope checks, method checks, status codes).
What is glue here (marked GLUE below): the tornado adapter (the package ships Django/FastAPI ones only),
storage (JSON file), the launch hint store, checks the package skips (redirect_uri against the
registration, OIDC response_type/scope/response_mode/prompt, the assertion's aud/iss/sub, score
validation), the line-item/score/result logic itself (abstract in the package), gradebook, outage switch.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import secrets
import time
import warnings
from pathlib import Path
from urllib.parse import urlencode

import jwt
import tornado.ioloop
import tornado.web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from lti1p3platform import exceptions as lti_exc
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService

with warnings.catch_warnings():  # the package's template module imports the deprecated pkg_resources
    warnings.simplefilter("ignore")
    from lti1p3platform.framework.templates import template as LAUNCH_FORM  # the package's form_post page

ROLES = {  # IMS LIS v2 role URIs (context role first, institution role second)
    "learner": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
                "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Student"],
    "instructor": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
                   "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Faculty"],
}
COURSE = {"id": "attention-course-2025", "label": "ATTN", "title": "Attention mechanisms (course)",
          "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"]}
DEPLOYMENT_ID = "attention-course-deployment-1"


def pem_keypair(directory: Path, stem: str) -> tuple[str, str]:
    """GLUE: make the platform's RSA key pair once and keep it (the package only takes PEM strings)."""
    priv, pub = directory / f"{stem}_private.pem", directory / f"{stem}_public.pem"
    if not priv.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        priv.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        priv.chmod(0o600)
        pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo))
    return priv.read_text(), pub.read_text()


class Store:
    """GLUE: line items, scores and pending launches in one JSON file (single-threaded server: no locks)."""

    def __init__(self, path: Path):
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {"next_id": 1, "lineitems": {}, "scores": {}, "users": {}}

    def save(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)  # atomic: a test reading the file never sees half of it


class PlatformConf(LTI1P3PlatformConfAbstract):
    """The package's platform config: one Registration (our issuer/client_id/keys + the tool's URLs)."""

    def init_platform_config(self, **opts):
        reg = (Registration()
               .set_iss(opts["issuer"]).set_client_id(opts["client_id"]).set_deployment_id(DEPLOYMENT_ID)
               .set_oidc_login_url(opts["tool_url"] + "/oauth_login")
               .set_launch_url(opts["target_link_uri"])  # target_link_uri claim + OIDC param
               .set_platform_private_key(opts["private_key"]).set_platform_public_key(opts["public_key"]))
        if opts.get("tool_jwks"):
            reg.set_tool_key_set(opts["tool_jwks"])  # given as a public key file
        elif opts.get("tool_jwks_url"):
            reg.set_tool_key_set_url(opts["tool_jwks_url"])  # the package fetches it on first use
        self._registration = reg
        self.token_url = opts["issuer"] + "/token"

    def get_registration_by_params(self, **kwargs):
        return self._registration

    def tool_validate_and_decode(self, jwt_token_string):
        # GLUE: the package decodes the client assertion with verify_aud=False and never looks at iss/sub;
        # RFC 7523 wants aud = our token endpoint and iss = sub = the client_id.
        claims = super().tool_validate_and_decode(jwt_token_string)
        key = self.get_tool_public_key()
        jwt.decode(jwt_token_string, key, algorithms=["RS256"], audience=self.token_url)
        if claims.get("iss") != self._registration.get_client_id() or claims.get("sub") != claims.get("iss"):
            raise lti_exc.LtiException("client assertion iss/sub must be the client_id")
        return claims


class TornadoRequest(Request):
    """GLUE: the package's Request adapter for tornado (it ships Django and FastAPI ones)."""

    def build_metadata(self, req) -> TRequest:
        body_json = None
        ctype = req.headers.get("Content-Type", "")
        if req.body and "json" in ctype:
            body_json = json.loads(req.body)
        flat = lambda args: {k: v[-1].decode() for k, v in args.items()}  # noqa: E731
        return {"method": req.method, "form_data": flat(req.body_arguments), "get_data": flat(req.query_arguments),
                "headers": req.headers, "content_type": ctype, "path": req.path, "json": body_json}


class OIDCLogin(OIDCLoginAbstract):
    """The package builds the login-initiation URL (iss, login_hint, target_link_uri, lti_message_hint,
    client_id, lti_deployment_id); we only give it the hint and return the URL to redirect to."""

    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


class MessageLaunch(LTIAdvantageMessageLaunchAbstract):
    """The package validates the tool's authentication request (nonce, state, redirect_uri, client_id),
    puts nonce/state in, signs the id_token (RS256, kid) and renders the auto-submit form."""

    def render_launch_form(self, launch_data, **kwargs):
        return LAUNCH_FORM.render(launch_data)


class App:
    def __init__(self, args):
        self.state = Path(args.state)
        self.state.mkdir(parents=True, exist_ok=True)
        self.base = f"http://127.0.0.1:{args.port}"
        self.tool_url = args.tool_url.rstrip("/")
        self.redirect_uri = self.tool_url + "/oauth_callback"  # the only redirect_uri registered for the tool
        self.down_file = self.state / "AGS_DOWN"
        self.store = Store(self.state / "platform.json")
        priv, pub = pem_keypair(self.state, "platform")
        tool_jwks = None
        if args.tool_public_key:
            tool_jwks = {"keys": [Registration.get_jwk(Path(args.tool_public_key).read_text())]}
        # the JupyterHub's landing page after login; the authenticator turns target_link_uri into its next_url
        # (a target ending in /hub falls back to the hub's default, i.e. spawning the user's server)
        target = args.target_link_uri or self.tool_url.rsplit("/lti13", 1)[0] + "/home"
        self.conf = PlatformConf(issuer=self.base, client_id=args.client_id, tool_url=self.tool_url,
                                 target_link_uri=target, private_key=priv, public_key=pub,
                                 tool_jwks=tool_jwks, tool_jwks_url=args.tool_jwks_url)
        self.conf.get_registration()

    @property
    def down(self):
        return self.down_file.exists()

    def lineitem_url(self, n):
        return f"{self.base}/lineitems/{n}"


class AGS(AssignmentsGradesService):
    """The package does auth (bearer token signed by us, scopes), methods and status codes; the data
    operations are abstract in it, so they are GLUE here over the JSON store."""

    def __init__(self, request, app: App, scopes=None):
        super().__init__(request, app.conf, app.base + "/lineitems")
        self.app, self.db, self.scopes = app, app.store.data, scopes

    @property
    def allowed_scopes(self):
        # GLUE: the package accepts a token holding ANY of the service's scopes on EVERY endpoint (a
        # result.readonly token could post scores); we narrow it to the scopes this endpoint needs.
        return self.scopes or super().allowed_scopes

    def find_lineitems(self, page=1, limit=None, line_item_id=None, resource_link_id=None, resource_id=None, tag=None, **_):
        items = list(self.db["lineitems"].values())
        for key, want in (("resourceLinkId", resource_link_id), ("resourceId", resource_id), ("tag", tag)):
            if want is not None:
                items = [i for i in items if i.get(key) == want]
        return {"content": items, "has_next": False, "next": None}

    def find_lineitem(self, line_item_id):
        item = self.db["lineitems"].get(str(line_item_id))
        if not item:
            raise lti_exc.LineItemNotFoundException(line_item_id)
        return item

    def create_lineitem(self, creation_data):
        # one line item per (resource link, label, tag, resourceId): creating the same again returns the first,
        # so a tool that retries after a timeout does not make a second gradebook column
        key = lambda i: (i.get("resourceLinkId"), i.get("label"), i.get("tag"), i.get("resourceId"))  # noqa: E731
        for item in self.db["lineitems"].values():
            if key(item) == key(creation_data):
                return item
        if not creation_data.get("label") or not float(creation_data.get("scoreMaximum", 0)) > 0:
            raise lti_exc.LtiServiceException("label and scoreMaximum > 0 are required", 400)
        n = str(self.db["next_id"])
        self.db["next_id"] += 1
        item = dict(creation_data, id=self.app.lineitem_url(n))
        self.db["lineitems"][n] = item
        self.app.store.save()
        return item

    def update_lineitem(self, update_data):
        n = str(update_data["id"])
        item = self.find_lineitem(n)
        item.update({k: v for k, v in update_data.items() if k != "id"})
        self.app.store.save()
        return item

    def delete_lineitem(self, line_item_id):
        self.find_lineitem(line_item_id)
        del self.db["lineitems"][str(line_item_id)]
        self.db["scores"].pop(str(line_item_id), None)
        self.app.store.save()

    def update_score(self, line_item_id, score):
        self.find_lineitem(line_item_id)
        # GLUE: the package has "TODO: validate score"; AGS 2.0 requires these fields
        for field in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if not score.get(field):
                raise lti_exc.LtiServiceException(f"score needs {field}", 400)
        if score.get("scoreGiven") is not None and not score.get("scoreMaximum"):
            raise lti_exc.LtiServiceException("scoreGiven needs scoreMaximum", 400)
        score = dict(score, userId=str(score["userId"]))  # JSON object keys are strings
        per_item = self.db["scores"].setdefault(str(line_item_id), {})
        old = per_item.get(score["userId"])
        if old and old["timestamp"] >= score["timestamp"]:  # ISO 8601 in UTC compares as text
            return UpdateScoreStatus.OLD_TIMESTAMP  # -> 409, as the spec asks for out-of-order scores
        per_item[score["userId"]] = dict(score, receivedAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.app.store.save()
        return UpdateScoreStatus.SUCCESS if old else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id, page=1, limit=None, user_id=None, **_):
        self.find_lineitem(line_item_id)
        url = self.app.lineitem_url(line_item_id)
        out = [{"id": f"{url}/results/{uid}", "scoreOf": url, "userId": uid, "resultScore": s.get("scoreGiven"),
                "resultMaximum": s.get("scoreMaximum", 1), "comment": s.get("comment")}
               for uid, s in self.db["scores"].get(str(line_item_id), {}).items() if user_id in (None, uid)]
        return {"content": out, "has_next": False, "next": None}


class Base(tornado.web.RequestHandler):
    app: App

    def initialize(self, app):
        self.app = app

    def check_xsrf_cookie(self):
        pass

    def json(self, data, code=200, ctype="application/json"):
        self.set_status(code)
        self.set_header("Content-Type", ctype)
        self.finish(json.dumps(data))


class JWKSHandler(Base):
    def get(self):
        self.json(self.app.conf.get_jwks())  # the package: platform public key as a JWK with kid/alg/use


class LaunchHandler(Base):
    def get(self):
        user, role = self.get_argument("user"), self.get_argument("role", "learner")
        resource = self.get_argument("resource", "assignment-1")
        assignment = self.get_argument("assignment", "")  # the link's custom parameter naming the notebook
        if role not in ROLES:
            raise tornado.web.HTTPError(400, f"role must be one of {sorted(ROLES)}")
        # GLUE: lti_message_hint is an opaque handle for this launch; /authorize looks it up
        hint = secrets.token_urlsafe(16)
        self.app.store.data.setdefault("launches", {})[hint] = {"user": user, "role": role, "resource": resource,
                                                                "assignment": assignment, "at": time.time()}
        self.app.store.save()
        login = OIDCLogin(TornadoRequest(self.request), self.app.conf)
        login.set_lti_message_hint(hint=hint)
        self.redirect(login.initiate_login(user))  # login_hint = the user's name here


class AuthorizeHandler(Base):
    def get(self):
        req = TornadoRequest(self.request)
        params = req.get_data or req.form_data
        # GLUE: checks the package leaves out (OIDC implicit flow as LTI 1.3 / IMS Security 1.0 requires)
        expected = {"response_type": "id_token", "scope": "openid", "response_mode": "form_post", "prompt": "none"}
        for k, v in expected.items():
            if params.get(k) != v:
                raise tornado.web.HTTPError(400, f"authorization request: {k} must be {v!r}, got {params.get(k)!r}")
        if params.get("redirect_uri") != self.app.redirect_uri:  # never post an id_token to an unregistered URL
            raise tornado.web.HTTPError(400, f"redirect_uri {params.get('redirect_uri')!r} is not registered")
        launch = self.app.store.data.get("launches", {}).pop(params.get("lti_message_hint", ""), None)
        self.app.store.save()
        if not launch or launch["user"] != params.get("login_hint") or time.time() - launch["at"] > 600:
            raise tornado.web.HTTPError(400, "unknown, used or expired lti_message_hint / login_hint")
        user, role, resource = launch["user"], launch["role"], launch["resource"]
        sub = f"sub-{user}"  # stable opaque user id; the AGS userId of this user
        self.app.store.data["users"][sub] = {"name": user, "role": role}
        self.app.store.save()

        ml = MessageLaunch(req, self.app.conf)
        ml.set_user_data(sub, ROLES[role], full_name=user.title(), email_address=f"{user}@example.org",
                         preferred_username=user)
        ml.set_resource_link_claim(resource, title=f"Assignment {resource}")
        ml.set_launch_context_claim(COURSE["id"], COURSE["type"], COURSE["title"], COURSE["label"])
        custom = {"username": user, "resource": resource}
        if launch.get("assignment"):
            custom["assignment"] = launch["assignment"]
        ml.set_custom_parameters_claim(custom)
        items = [i for i in self.app.store.data["lineitems"].values() if i.get("resourceLinkId") == resource]
        ml.set_ags(self.app.base + "/lineitems", items[0]["id"] if len(items) == 1 else None,
                   allow_creating_lineitems=True)
        # given_name/family_name are not among the package's setters
        ml.set_extra_claims({"given_name": user, "family_name": "Student" if role == "learner" else "Teacher",
                             "https://purl.imsglobal.org/spec/lti/claim/launch_presentation":
                                 {"document_target": "window", "return_url": self.app.base + "/gradebook"}})
        try:
            page = ml.lti_launch()
        except lti_exc.PreflightRequestValidationException:
            raise tornado.web.HTTPError(400, "authorization request: nonce, state, redirect_uri or client_id wrong")
        self.finish(page)

    post = get  # the OIDC authorization endpoint may be hit with GET or POST


class TokenHandler(Base):
    def post(self):
        if self.app.down:
            return self.json({"error": "temporarily_unavailable"}, 503)
        data = TornadoRequest(self.request).form_data
        if data.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return self.json({"error": "invalid_request", "error_description": "client_assertion_type"}, 400)
        try:
            self.json(self.app.conf.get_access_token(data))  # the package does the grant
        except lti_exc.MissingRequiredClaim as e:
            self.json({"error": "invalid_request", "error_description": str(e)}, 400)
        except lti_exc.UnsupportedGrantType:
            self.json({"error": "unsupported_grant_type"}, 400)
        except (lti_exc.LtiException, lti_exc.InvalidKeySetUrl, jwt.PyJWTError) as e:
            self.json({"error": "invalid_client", "error_description": str(e) or type(e).__name__}, 401)


_S = "https://purl.imsglobal.org/spec/lti-ags/scope/"
NEEDS = {"handle_get_lineitems": [_S + "lineitem", _S + "lineitem.readonly"],
         "handle_get_lineitem": [_S + "lineitem", _S + "lineitem.readonly"],
         "handle_create_lineitem": [_S + "lineitem"], "handle_update_lineitem": [_S + "lineitem"],
         "handle_delete_lineitem": [_S + "lineitem"], "handle_update_score": [_S + "score"],
         "handle_get_results": [_S + "result.readonly"]}


class AGSHandler(Base):
    """Routes AGS requests to the package's handle_* methods and turns its Response into HTTP."""

    def _run(self, name, **kw):
        svc = AGS(TornadoRequest(self.request), self.app, NEEDS[name])
        resp = svc.handle_resp(getattr(svc, name), **kw)  # handle_resp turns LtiServiceException into a code
        if not 200 <= resp.code < 300:
            return self.json({"error": resp.message}, resp.code)
        result = resp.result
        if isinstance(result, dict) and "content" in result:
            result = result["content"]
        if result is None:
            self.set_status(resp.code)
            return self.finish()
        self.json(result, resp.code, resp.media_type)

    def get(self, n=None, sub=None):
        if sub == "results":
            return self._run("handle_get_results", line_item_id=n)
        return self._run("handle_get_lineitem", line_item_id=n) if n else self._run("handle_get_lineitems")

    def post(self, n=None, sub=None):
        if sub == "scores":
            if self.app.down:
                return self.json({"error": "AGS temporarily unavailable"}, 503)
            return self._run("handle_update_score", line_item_id=n)
        if n is None:
            return self._run("handle_create_lineitem")
        raise tornado.web.HTTPError(405)

    def put(self, n=None, sub=None):
        return self._run("handle_update_lineitem", line_item_id=n)

    def delete(self, n=None, sub=None):
        return self._run("handle_delete_lineitem", line_item_id=n)


def gradebook_rows(app):
    db = app.store.data
    rows = []
    for n, item in sorted(db["lineitems"].items(), key=lambda kv: int(kv[0])):
        for uid, s in sorted(db["scores"].get(n, {}).items()):
            rows.append({"user": db["users"].get(uid, {}).get("name", uid), "userId": uid, "lineitem": item["label"],
                         "lineitem_id": item["id"], "resourceLinkId": item.get("resourceLinkId"),
                         **{k: s.get(k) for k in ("scoreGiven", "scoreMaximum", "activityProgress",
                                                  "gradingProgress", "timestamp", "receivedAt", "comment")}})
    return rows


class GradebookJSON(Base):
    def get(self):
        self.json({"lineitems": list(self.app.store.data["lineitems"].values()), "scores": gradebook_rows(self.app),
                   "ags_down": self.app.down})


class Gradebook(Base):
    def get(self):
        cells = "".join(f"<tr><td>{html.escape(r['user'])}</td><td>{html.escape(r['lineitem'])}</td>"
                        f"<td>{r['scoreGiven']} / {r['scoreMaximum']}</td><td>{r['gradingProgress']}</td>"
                        f"<td>{html.escape(str(r['timestamp']))}</td></tr>" for r in gradebook_rows(self.app))
        self.finish(f"<!doctype html><title>Gradebook</title><h1>Gradebook: {COURSE['title']}</h1>"
                    f"<p>AGS {'DOWN' if self.app.down else 'up'}</p><table border=1><tr><th>user</th>"
                    f"<th>line item</th><th>score</th><th>grading</th><th>timestamp</th></tr>{cells}</table>")


class AdminAGS(Base):
    """Outage switch for tests. Localhost-only prototype: no auth."""

    def get(self):
        self.json({"down": self.app.down})

    def post(self):
        if self.get_argument("down") in ("1", "true", "yes"):
            self.app.down_file.touch()
        else:
            self.app.down_file.unlink(missing_ok=True)
        self.get()


class Home(Base):
    def get(self):
        links = "".join(f'<li><a href="/launch?{urlencode(dict(user=u, role=r, resource="assignment-1"))}">'
                        f"{u} ({r})</a></li>" for u, r in (("alice", "learner"), ("teacher", "instructor")))
        self.finish(f"<!doctype html><title>LTI platform</title><h1>{COURSE['title']}</h1><ul>{links}</ul>"
                    f'<p><a href="/gradebook">gradebook</a></p>')


def make_app(app: App):
    kw = {"app": app}
    return tornado.web.Application([
        (r"/", Home, kw), (r"/jwks", JWKSHandler, kw), (r"/launch", LaunchHandler, kw),
        (r"/authorize", AuthorizeHandler, kw), (r"/token", TokenHandler, kw),
        (r"/lineitems/?", AGSHandler, kw), (r"/lineitems/(\d+)", AGSHandler, kw),
        (r"/lineitems/(\d+)/(scores|results)", AGSHandler, kw),
        (r"/gradebook", Gradebook, kw), (r"/gradebook.json", GradebookJSON, kw), (r"/admin/ags", AdminAGS, kw),
    ])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--tool-url", required=True, help="the hub's LTI base, e.g. http://127.0.0.1:8000/hub/lti13")
    p.add_argument("--state", required=True, help="folder for keys and platform.json")
    p.add_argument("--client-id", default="jupyterhub-attention-course")
    p.add_argument("--target-link-uri", help="default: <hub>/hub/home (where the hub lands the user)")
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--tool-public-key", help="PEM file: the tool's public key for AGS client assertions")
    keys.add_argument("--tool-jwks-url", help="URL of the tool's JWKS for AGS client assertions")
    args = p.parse_args()
    app = App(args)
    make_app(app).listen(args.port, address="127.0.0.1")
    print(f"LTI platform on {app.base} issuer={app.base} client_id={args.client_id} "
          f"deployment_id={DEPLOYMENT_ID} tool={app.tool_url}", flush=True)
    tornado.ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main()
