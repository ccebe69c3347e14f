"""The researcher blueprint as module-level views (issue #16): per-app state stays per app.

The blueprint is one module-level object registered on every app that ``create_app`` makes, so
anything the old factory kept in closures (the experiment, the failed log-ins) must now live in
the app. Two apps in one process (two experiments, or a test suite) must not share it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from experiment_helpers import csrf_of, frozen_login_clock, write_experiment
from werkzeug.security import generate_password_hash

from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.researcher import MAX_FAILS, PASSWORD_KEY, researcher_blueprint

PASSWORD = "correct horse battery"


def _app_with_password(directory: Path):  # noqa: ANN202
    made = create_experiment(write_experiment(directory, practice=0))
    app = create_app(made.directory)
    app.extensions["nlgeval_experiment"]["store"].set_meta(
        PASSWORD_KEY, generate_password_hash(PASSWORD, "pbkdf2:sha256:1"))
    return made, app


def _fail(app, times: int) -> list[int]:  # noqa: ANN001
    c = app.test_client()
    csrf = csrf_of(c.get("/login").get_data(as_text=True))
    return [c.post("/login", data={"csrf": csrf, "password": f"guess{k}"}).status_code
            for k in range(times)]


def test_two_apps_keep_their_own_experiment_and_throttle(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_login_clock(monkeypatch)  # no request outlasts the 1 s back-off, however loaded
    made_a, app_a = _app_with_password(tmp_path / "a")
    made_b, app_b = _app_with_password(tmp_path / "b")
    try:
        assert app_a.blueprints["researcher"] is researcher_blueprint is app_b.blueprints[
            "researcher"]
        # each app answers its own researcher token only (with a password set, the token
        # view needs the log-in too: 303 to /login)
        ca, cb = app_a.test_client(), app_b.test_client()
        assert made_a.researcher_token != made_b.researcher_token
        assert ca.get(f"/r/{made_a.researcher_token}").status_code == 303
        assert ca.get(f"/r/{made_b.researcher_token}").status_code == 404
        assert cb.get(f"/r/{made_b.researcher_token}").status_code == 303
        assert cb.get(f"/r/{made_a.researcher_token}/ratings.csv").status_code == 404
        # app A is throttled after MAX_FAILS failures; app B (same client address) is not
        assert _fail(app_a, MAX_FAILS + 1) == [401] * MAX_FAILS + [429]
        assert _fail(app_b, 1) == [401]
        c = app_b.test_client()
        csrf = csrf_of(c.get("/login").get_data(as_text=True))
        r = c.post("/login", data={"csrf": csrf, "password": PASSWORD})
        assert r.status_code == 303 and r.headers["Location"].endswith("/dashboard")
        assert c.get("/dashboard").status_code == 200
        assert c.get("/dashboard/flags.csv").mimetype == "text/csv"
        assert c.get("/dashboard/other.csv").status_code == 404
    finally:
        for app in (app_a, app_b):
            app.extensions["nlgeval_experiment"]["store"].dispose()
