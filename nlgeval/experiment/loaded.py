"""The experiment a running web app serves, loaded once at start-up: its config, its database
(:class:`~nlgeval.experiment.storage.Store`), the texts and the fixed part of every trial
(copied into the database at ``create`` and never changed afterwards), the rendered pages'
Markdown and the signing key; plus what every route shares (CSRF, absolute links, rendering).
The blueprints (:mod:`nlgeval.experiment.evaluator`, :mod:`nlgeval.experiment.researcher`)
reach it through :func:`current_experiment`.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask import Response, abort, current_app, render_template, request, session, url_for
from markupsafe import Markup

from nlgeval.experiment.build import check_experiment, database_url
from nlgeval.experiment.config import ExperimentConfig
from nlgeval.experiment.i18n import translate
from nlgeval.experiment.markup import render_markdown
from nlgeval.experiment.storage import Store, utcnow
from nlgeval.experiment.storage.design import contexts, drop_meta, texts, trial_cache

MAX_COMMENT = 5000
#: the request header a dry run's simulated evaluator sends its own clock in (epoch
#: milliseconds); read only by the temporary server of ``nlgeval experiment simulate``
SIMULATED_CLOCK_HEADER = "X-Nlgeval-Simulated-Clock"


@dataclass
class Experiment:
    """What every request needs, loaded once when the app is made (the texts are copied into
    the database at ``create`` and never change afterwards).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_study_folder
    >>> with example_study_folder() as made:
    ...     x = load_experiment(made.directory)
    ...     x._("Next"), len(x.texts) > 0
    ...     x.store.dispose()
    ('Next', True)
    """

    cfg: ExperimentConfig
    store: Store
    meta: dict[str, str]
    texts: dict[tuple[str, str], str]
    contexts: dict[str, str]
    intro_html: Markup
    instructions_html: Markup
    consent_html: Markup | None
    thank_you_html: Markup
    secret: bytes = field(repr=False, default=b"")
    #: where participants reach the server (``--base-url`` or the remembered one): links
    #: shown in pages are built from it, never from the request's Host header
    base_url: str = "http://127.0.0.1:8000"
    #: what never changes about a trial, by id: (id, position, practice, item, system,
    #: system_b, details, qc_kind); per request only whether it is answered is read
    trials: dict[int, tuple[Any, ...]] = field(repr=False, default_factory=dict)
    #: set only by the temporary server of a dry run (``nlgeval experiment simulate``), never
    #: by ``serve``: the evaluator pages then take the time from the simulated evaluator's
    #: clock (:data:`SIMULATED_CLOCK_HEADER`), so a dry run's times on task are its simulated
    #: reading and answering times; a real participant's time is always the server's
    simulated_clock: bool = False

    def _(self, msg: str, **kw: object) -> str:
        return translate(self.cfg.language, msg, **kw)

    # ------------------------------------------------------------------ shared helpers
    def now(self) -> datetime:
        """The time (UTC, no time zone) the evaluator pages store: the server's clock, or
        on a dry run's server (:attr:`simulated_clock`) the simulated evaluator's."""
        ms = self._simulated_ms()
        if ms is None:
            return utcnow()
        return datetime.fromtimestamp(ms / 1000, UTC).replace(tzinfo=None)

    def now_ms(self) -> int:
        """:meth:`now` in epoch milliseconds (a trial page's signed "shown at" stamp)."""
        ms = self._simulated_ms()
        return int(time.time() * 1000) if ms is None else ms

    def _simulated_ms(self) -> int | None:
        if not self.simulated_clock:
            return None
        raw = request.headers.get(SIMULATED_CLOCK_HEADER, "")
        return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 15 else None

    def csrf_token(self) -> str:
        tok = session.get("csrf")
        if not tok:
            tok = secrets.token_urlsafe(24)
            session["csrf"] = tok
        return tok

    def check_csrf(self) -> None:
        sent = request.form.get("csrf", "")
        have = session.get("csrf", "")
        if not sent or not have or not hmac.compare_digest(sent, have):
            abort(400, self._("This form has expired or did not come from this site (CSRF "
                              "check failed). Go back to your personal link and try again."))

    def link(self, endpoint: str, **kw: Any) -> str:
        """An absolute link under :attr:`base_url` (a shown link must not depend on the
        Host header a client sent)."""
        return self.base_url + url_for(endpoint, **kw)

    def render(self, template: str, status: int = 200, **kw: Any) -> Response:
        return Response(render_template(template, cfg=self.cfg, **kw), status=status)


def load_experiment(
    directory: str | Path, *, database: str | None = None, threads: int = 8,
    base_url: str | None = None,
) -> Experiment:
    """Validate the experiment directory and its database (at start-up, not mid-session).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_study_folder
    >>> with example_study_folder() as made:
    ...     x = load_experiment(made.directory)
    ...     x.cfg.title, x.consent_html is None
    ...     x.store.dispose()
    ('Weather forecast quality', True)
    """
    from nlgeval.experiment.config import load_config
    from nlgeval.experiment.settings import base_url_for, secret_key

    cfg = load_config(directory)
    store = Store(database_url(cfg, database), pool_size=threads)
    meta = check_experiment(cfg, store)
    if meta.pop("secret_key", None) is not None:  # made by an older version: out of the db
        drop_meta(store, "secret_key")
    consent = cfg.crowd.consent if cfg.crowd is not None else ""
    return Experiment(
        cfg=cfg, store=store, meta=meta, texts=texts(store), contexts=contexts(store),
        intro_html=render_markdown(cfg.introduction),
        instructions_html=render_markdown(cfg.instructions),
        consent_html=render_markdown(consent) if consent.strip() else None,
        thank_you_html=render_markdown(cfg.thank_you),
        secret=secret_key(cfg.directory).encode(), trials=trial_cache(store),
        base_url=base_url_for(cfg.directory, base_url),
    )


def current_experiment() -> Experiment:
    """The experiment of the app handling the current request (loaded once by
    :func:`create_app`).

    Examples
    --------
    >>> from flask import Flask
    >>> app = Flask("demo")  # create_app stores the loaded Experiment here
    >>> app.extensions["nlgeval_experiment"] = {"experiment": "the loaded experiment"}
    >>> with app.app_context():
    ...     current_experiment()
    'the loaded experiment'
    """
    return current_app.extensions["nlgeval_experiment"]["experiment"]
