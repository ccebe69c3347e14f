"""The evaluation web application (Flask), served by ``nlgeval serve EXPERIMENT_DIR``.

The evaluator's path is LG-Eval's state machine (Kow & Belz 2012, section 3.3 and Figure 3):
personal link (or the open sign-up link, which hands out the next free trial set) ->
introduction (and consent) -> practice trials -> the trial set in the evaluator's own order ->
exit questionnaire -> thank-you (with the completion code). The state lives in the database, not
in the browser, so an evaluator who leaves resumes where they stopped, and every page is derived
from it (GET shows the current step; each POST changes it once and redirects: post/redirect/get).

The app is three blueprints: ``site`` (home page, health check, favicon, error pages),
``evaluator`` (:mod:`nlgeval.experiment.evaluator`) and ``researcher``
(:mod:`nlgeval.experiment.researcher`: the token view and the password-protected dashboard).

Guarantees, each tested:
- each judgement is committed before the next trial is shown (the redirect follows the commit);
- a double submit never duplicates a judgement: the trial is claimed with a conditional
  ``UPDATE ... WHERE answered_at IS NULL`` and the ``UNIQUE (trial_id, criterion)`` constraint
  backs it up; a repeated POST just redirects to the current step;
- an evaluator's token reaches their own trials only, and only the current one can be answered;
  values that the form could not have produced (off the scale or off the slider's grid) are
  refused (400) and nothing is stored;
- an incomplete form is shown again with the answers kept and the missing part marked (422),
  the error linked to its field for screen readers;
- a visual analogue scale that was neither moved nor confirmed is never recorded;
- a platform participant id alone never opens someone's trial set: the open sign-up link
  recognises a returning participant by their browser's signed cookie or their platform
  session id, and never lets two people share an id (:mod:`nlgeval.experiment.participants`);
- the signing key lives in an owner-only file, not in the database; researcher sessions are
  held server-side and end at log-out or a new password; shown links come from the base URL;
- forms carry a CSRF token bound to a signed session cookie; system outputs are escaped (Jinja
  autoescaping) and a strict Content-Security-Policy allows no inline script and no asset from
  outside the server; URLs with tokens are never sent as referrers.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, Response, request
from werkzeug.exceptions import HTTPException

from nlgeval.experiment.evaluator import evaluator_blueprint
from nlgeval.experiment.i18n import criterion_wording, gettext_for, text_direction
from nlgeval.experiment.loaded import Experiment, load_experiment
from nlgeval.experiment.platforms import content_security_policy
from nlgeval.experiment.researcher import researcher_blueprint

CSP = content_security_policy(())  # no framing; [crowd] frame_ancestors allows some sites
# the site icon, inline (an .svg in static/ would need a package-data rule to ship)
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" '
    b'rx="6" fill="#1f5fa8"/><path d="M8 17l5 5 11-12" fill="none" stroke="#fff" '
    b'stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>'
)


def _site_blueprint(x: Experiment) -> Blueprint:
    bp = Blueprint("site", __name__)

    @bp.get("/")
    def index() -> Response:
        return x.render("site/index.html")

    @bp.get("/healthz")
    def healthz() -> str:
        return "ok"

    @bp.get("/favicon.ico")
    def favicon() -> Response:
        resp = Response(FAVICON, mimetype="image/svg+xml")
        resp.headers["Cache-Control"] = "public, max-age=86400"
        return resp

    @bp.app_errorhandler(HTTPException)
    def error_page(err: HTTPException) -> Response:
        code = err.code or 500
        desc = err.description or ""
        if code == 404:
            desc = x._("There is nothing here. Please check that you used your personal link "
                        "exactly.")
        elif code == 413:
            desc = x._("What you sent is too large. Please shorten your comment and try again.")
        elif code in (405, 500) or desc == type(err).description:
            desc = x._("The server could not handle this request. Your earlier answers are "
                       "saved; please try again from your personal link.")
        resp = x.render("site/error.html", status=code, code=code, message=desc)
        if code == 405 and hasattr(err, "valid_methods") and err.valid_methods:
            resp.headers["Allow"] = ", ".join(err.valid_methods)
        return resp

    @bp.app_errorhandler(Exception)
    def crash_page(err: Exception) -> Response:  # a bug: log it, show a styled page
        import logging

        logging.getLogger("nlgeval.experiment").exception("unhandled error", exc_info=err)
        msg = x._("The server could not handle this request. Your earlier answers are saved; "
                  "please try again from your personal link.")
        return x.render("site/error.html", status=500, code=500, message=msg)

    return bp


def create_app(
    directory: str | Path,
    *,
    database: str | None = None,
    threads: int = 8,
    secure_cookies: bool = False,
    base_url: str | None = None,
    proxies: int = 0,
) -> Flask:
    """The Flask app for one experiment directory (validated now, not during a session).

    ``database`` overrides the database ``create`` remembered. ``secure_cookies`` marks the
    session cookie ``Secure`` (sent over HTTPS only): set it when evaluators reach the app
    through an HTTPS reverse proxy; leave it off for plain-HTTP use on localhost, where
    browsers would otherwise drop the cookie and every form would fail CSRF. ``base_url``
    (else the remembered one) is where shown links point. ``proxies`` is the number of
    reverse proxies in front whose ``X-Forwarded-For`` gives the client's address (the join
    limit counts per address: behind a proxy, every client would otherwise be the proxy).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client()
    ...     token = made.evaluators["token"].iloc[0]
    ...     r = c.get(f"/e/{token}")
    ...     r.status_code, "Start" in r.get_data(as_text=True)
    ...     c.get("/e/not-a-token").status_code
    (200, True)
    404
    """
    x = load_experiment(directory, database=database, threads=threads, base_url=base_url)
    app = Flask(__name__, static_folder="static", template_folder="templates")
    if proxies:  # the client address from X-Forwarded-For, set by this many proxies
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies)  # type: ignore[method-assign]  # Flask's documented way
    app.config.update(
        SECRET_KEY=x.secret,
        SESSION_COOKIE_NAME="nlgeval_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=secure_cookies,
        MAX_CONTENT_LENGTH=256 * 1024,
        SEND_FILE_MAX_AGE_DEFAULT=3600,
    )
    frames = x.cfg.crowd.frame_ancestors if x.cfg.crowd is not None else ()
    if frames:  # shown in a platform's frame: a third-party cookie (platforms.py)
        app.config.update(SESSION_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=True,
                          SESSION_COOKIE_PARTITIONED=True)
    csp = content_security_policy(frames)
    app.extensions["nlgeval_experiment"] = {"config": x.cfg, "store": x.store, "experiment": x,
                                            "proxies": proxies}
    app.jinja_env.add_extension("jinja2.ext.i18n")
    gettext, ngettext = gettext_for(x.cfg.language)
    app.jinja_env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]  # added by jinja2.ext.i18n
    app.jinja_env.globals.update(lang=x.cfg.language, text_dir=text_direction(x.cfg.language),
                                 wording=lambda c: criterion_wording(x.cfg.language, c))

    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = csp
        resp.headers["X-Content-Type-Options"] = "nosniff"
        if not frames:
            resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["Referrer-Policy"] = "no-referrer"
        if not request.path.startswith("/static/") and request.path != "/favicon.ico":
            resp.headers["Cache-Control"] = "no-store"
        return resp

    app.register_blueprint(_site_blueprint(x))
    app.register_blueprint(evaluator_blueprint)
    app.register_blueprint(researcher_blueprint)
    return app
