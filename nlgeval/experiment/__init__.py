"""Online evaluation experiments: LG-Eval (Kow & Belz 2012) as a real web application.

Modules (one job each):

``config``   the experiment directory and ``experiment.toml``, validated up front.
``scales``   preset verbal descriptor scales (González-Corbelle et al. 2023, Table 1) and
             relative preference scales (Kow & Belz 2012).
``modes``    the kinds of trial (absolute, relative, triangle, MQM, ESA, best-worst scaling),
             one ``Mode`` each: config table, allocation, form, export, analysis hook.
``build``    ``create``: Latin-square (or triangle-questionnaire) trial sets into the database.
``storage``  every SQL statement, by concept (design, answers, leases, researcher, reports);
             SQLite (WAL, group commit) by default, PostgreSQL by URL.
``settings`` what ``create --database/--base-url`` remembers for serve, status and export.
``loaded``   the experiment a running app serves (config, store, texts), loaded at start-up.
``app``      the Flask application: ``site`` blueprint (home, health, favicon, error pages).
``evaluator`` blueprint: open sign-up link, personal link, trials, questionnaire, thank-you.
``researcher`` blueprint: password-protected dashboard and the token view.
``i18n``     the interface language catalogue (English, German; right-to-left aware).
``export``   the tidy ratings table (+ time on task, QC flags), progress, quality flags.
``server``   ``nlgeval serve``: the app on waitress (multi-threaded WSGI).
``example``  a ready-to-run example experiment (``nlgeval experiment init``).
"""

from __future__ import annotations

from nlgeval.experiment.build import CreatedExperiment, create_experiment
from nlgeval.experiment.config import ExperimentConfig, load_config

__all__ = ["CreatedExperiment", "ExperimentConfig", "create_experiment", "load_config"]
