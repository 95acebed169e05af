"""The sign-in link of the emails, in a browser (issue #14). Minimal on purpose: the web
front end owns the pages; this one turns the link into an account session kept in the Flask
session (key :data:`SESSION_KEY`, apart from the web front end's per-game seat tokens).

GET shows a button and changes nothing (mail scanners open links: a GET must not spend the
single-use link); the button POSTs, which signs in and stores the account token.
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

from flask import Response, current_app, render_template_string, request, session, url_for
from flask.views import MethodView

from dos_server.edge import Blueprint
from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import account

SESSION_KEY = "dos_account"  # the browser's account token (read by account.authenticate)

blp = Blueprint("signin", __name__, url_prefix="/account",
                description="The sign-in link from the email, in a browser")

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>DOS by mail: sign in</title></head>
<body><main><h1>DOS by mail</h1>{{ body|safe }}</main></body></html>"""


def _page(body: str, status: int = 200) -> Response:
    response = current_app.response_class(render_template_string(PAGE, body=body), status,
                                          mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


def _same_origin() -> bool:
    """A POST from our own page (a login-CSRF page elsewhere cannot sign you in)."""
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return origin is None
    ours = urlsplit(request.host_url)
    theirs = urlsplit(origin)
    return (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc)


@blp.route("/signin/<token>")
class SignIn(MethodView):
    @blp.response(200, content_type="text/html")
    @blp.alt_response(400, description="not a sign-in link of this server (an HTML page "
                      "that offers a fresh link)", content_type="text/html")
    @blp.alt_response(410, description="the link expired (an HTML page that offers a fresh "
                      "link)", content_type="text/html")
    def get(self, token: str) -> Response:
        """A page with a button that signs this browser in (the link works once)."""
        from dos_server.web.mailed import account_link_problem

        bad = account_link_problem(token)  # garbage or expired: the page offers a fresh link
        if bad is not None:
            return bad
        action = html.escape(url_for("signin.SignIn", token=token))
        return _page(f'<form method="post" action="{action}"><p>Sign in to DOS by mail in '
                     'this browser?</p><button type="submit">Sign in</button></form>')

    @blp.response(200, content_type="text/html")
    @blp.alt_response(400, description="not a sign-in link of this server (an HTML page "
                      "that offers a fresh link)", content_type="text/html")
    @blp.alt_response(410, description="the link was used already, or expired (an HTML page "
                      "that offers a fresh link)", content_type="text/html")
    @blp.alt_response(403, description="posted from another site")
    def post(self, token: str) -> Response:
        """Sign this browser in: an account session, kept in the session cookie."""
        if not _same_origin():
            raise Problem(403, "cross-site", "Cross-site request",
                          "sign in from the page the email's link opens")
        try:
            signed = account.verify_link(token, request.headers.get("User-Agent"),
                                         kind="browser")
        except DomainError as error:
            from dos_server.web.mailed import bad_link

            return bad_link(problem_of(error))  # used, expired or garbage: offers a fresh link
        session[SESSION_KEY] = signed["account_token"]
        home = "/me" if any(rule.rule == "/me" for rule in current_app.url_map.iter_rules()) \
            else "/api/me/games"
        return _page(f"<p>Signed in as {html.escape(signed['email'])}.</p>"
                     f'<p><a href="{home}">All your games</a></p>')
