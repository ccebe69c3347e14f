"""Where an experiment keeps its state: a real database through SQLAlchemy. Every SQL statement
of the web app and of the experiment commands is in this package; the routes and the other
modules call its functions and never build or run a statement themselves
(``tests/test_experiment_storage.py`` checks that).

SQLite (one file, ``experiment.db`` in the experiment directory, WAL journal, ``synchronous=FULL``
so a committed judgement survives a killed process and a power cut) by default; PostgreSQL by URL
(``postgresql+psycopg://user@host/db``) for bigger studies.

Tables (all prefixed ``nlgeval_`` so they cannot clash with others in a shared database):
``meta`` (researcher token, password hash, config fingerprint), ``evaluators`` (one per
trial set, with the unguessable personal token), ``outputs`` (the texts, copied at ``create`` so
what evaluators see cannot drift from what was designed), ``contexts``, ``trials`` (one row per
trial, in the evaluator's order, practice flagged), ``judgements`` (one row per trial and
criterion; the ``UNIQUE (trial_id, criterion)`` constraint makes a duplicate judgement
impossible whatever the web layer does) and ``researcher_sessions``.

The modules, by concept:

``engine``      :class:`Store` (engine, sessions, group commit, SQLite's writer lock), schema
                creation and upgrade (new nullable columns), the ``meta`` key/value table.
``schema``      the declarative tables.
``design``      what ``create`` writes (the design) and what the app loads once at start-up.
``answers``     the evaluator's hot path: their state in one query, start, answers (claimed
                idempotently; one statement on PostgreSQL), questionnaire, finish.
``leases``      the open sign-up link: claiming a free set, leases, released copies, outcomes.
``researcher``  researcher sessions and password, resetting a set, the dashboard's comments.
``reports``     read-only queries behind status, quality checks and exports.
"""

from __future__ import annotations

from nlgeval.experiment.storage.engine import ADVISORY_KEY as ADVISORY_KEY
from nlgeval.experiment.storage.engine import DB_NAME as DB_NAME
from nlgeval.experiment.storage.engine import Store as Store
from nlgeval.experiment.storage.engine import default_url as default_url
from nlgeval.experiment.storage.engine import redact as redact
from nlgeval.experiment.storage.schema import Base as Base
from nlgeval.experiment.storage.schema import Context as Context
from nlgeval.experiment.storage.schema import Evaluator as Evaluator
from nlgeval.experiment.storage.schema import Judgement as Judgement
from nlgeval.experiment.storage.schema import Meta as Meta
from nlgeval.experiment.storage.schema import Output as Output
from nlgeval.experiment.storage.schema import ResearcherSession as ResearcherSession
from nlgeval.experiment.storage.schema import Trial as Trial
from nlgeval.experiment.storage.schema import utcnow as utcnow
