"""Who is who in a crowd study: the open sign-up link's participants, their trial sets, the
lease on a set and the completion codes.

A platform id (Prolific's ``PROLIFIC_PID``, MTurk's ``workerId``) is not a secret: it shows
up in screenshots, forum posts and the researcher's own exports. So a set is never handed to
whoever presents a known id. A returning participant is recognised by what only their browser
has -- the signed session cookie set when they first joined -- or by the platform's session id
(``SESSION_ID``, ``assignmentId``) together with the participant id; a second browser with the
same id and neither gets a page saying so, never the first one's set (:func:`claim_set`). A
link without the participant parameter is refused when it carries other platform parameters
(a broken platform link), and otherwise, for open links without a platform, makes an
anonymous participant with an id of its own; people are never merged.

A set handed out but not progressing for ``lease_minutes`` goes back to the pool: its answers
so far are moved to a kept copy of the set (``released_at`` set, ``~released`` added to the
evaluator's name, so exports mark them), and the set itself starts afresh under a new link
(:func:`nlgeval.experiment.storage.leases.release_set`). Each client address may take
``join_limit`` sets per ``join_window_minutes`` (counted in the database, across server
processes, by an HMAC of the address, so no address is stored).

Per-participant completion codes are an HMAC of the participant (or evaluator) id under the
experiment's signing key (:func:`completion_code`): the researcher can list them
(``nlgeval experiment status DIR --json``) and check each submission, and a code seen on one
submission is useless for another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import datetime, timedelta
from typing import Any

from nlgeval.experiment.config import CrowdConfig
from nlgeval.experiment.storage import Store, utcnow
from nlgeval.experiment.storage.leases import (
    Claim,
    JoinRequest,
    claim,
    finished_sets,
    release_expired,
)


def client_hash(secret: bytes, address: str) -> str:
    """A pseudonym of a client address for the join limit (the address is not stored).

    Examples
    --------
    >>> len(client_hash(b"k", "10.0.0.1")), client_hash(b"k", "a") == client_hash(b"k", "b")
    (32, False)
    """
    return hmac.new(secret, b"client:" + address.encode(), hashlib.sha256).hexdigest()[:32]


def claim_set(
    store: Store, crowd: CrowdConfig, *, pid: str | None, params: dict[str, str],
    client: str, now: datetime | None = None,
) -> Claim:
    """Hand out a trial set (see the module docstring): the participant's own set when
    they are recognised by their platform session id, a refusal when their id already holds
    a set, else the next free set in design order (after returning expired leases to the
    pool), unless this client took ``join_limit`` sets in the window. ``pid=None`` makes an
    anonymous participant. Each attempt is one serialised write transaction (a group-commit
    job on SQLite, under an advisory lock on PostgreSQL;
    :func:`~nlgeval.experiment.storage.leases.claim`), so concurrent
    joins (other threads, other server processes) cannot take one set twice or give one id
    two sets.

    Examples
    --------
    >>> from nlgeval.experiment.config import CrowdConfig
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     crowd = CrowdConfig()
    ...     first = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1",
    ...                       "SESSION_ID": "s1"}, client="c1")
    ...     again = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1",
    ...                       "SESSION_ID": "s1"}, client="c2")
    ...     other = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1"},
    ...                       client="c3")
    ...     first.token == again.token, other
    (True, Claim(token=None, refused='taken'))
    """
    now = now or utcnow()
    req = JoinRequest(
        pid, next((params[k] for k in crowd.session_keys if params.get(k)), None),
        crowd.session_keys, params, client, crowd.join_limit, crowd.join_window_minutes)
    got = claim(store, req, now)
    if got.refused == "full" and crowd.lease_minutes:  # return idle sets, then try again
        release_expired(store, now - timedelta(minutes=crowd.lease_minutes), now)
        got = claim(store, req, now)
    return got


def completion_code(secret: bytes, who: str) -> str:
    """A participant's own completion code: 10 characters of an HMAC-SHA256 of their id
    (``who``) under the experiment's signing key (base32, no look-alike padding).

    Examples
    --------
    >>> code = completion_code(b"key", "p1")
    >>> len(code), code == completion_code(b"key", "p2")
    (10, False)
    """
    mac = hmac.new(secret, b"completion:" + who.encode(), hashlib.sha256).digest()
    return base64.b32encode(mac[:10]).decode()[:10]


def code_subject(participant: str | None, name: str) -> str:
    """What a per-participant code is computed from: the participant id, else the evaluator.

    Examples
    --------
    >>> code_subject("p1", "3"), code_subject(None, "3")
    ('p1', 'evaluator:3')
    """
    return participant or f"evaluator:{name}"


def too_fast(started: datetime | None, answered: list[datetime | None], min_trial_ms: int
             ) -> bool:
    """Whether a set was finished faster than ``min_trial_ms`` per trial on average (from
    the start to the last answer, server-side times): no code for it until the researcher
    has looked.

    Examples
    --------
    >>> from datetime import datetime
    >>> t0 = datetime(2026, 1, 1)
    >>> too_fast(t0, [t0 + timedelta(milliseconds=30)] * 2, 1000)
    True
    >>> too_fast(t0, [t0 + timedelta(seconds=5)] * 2, 1000)
    False
    """
    done = [t for t in answered if t is not None]
    if not min_trial_ms or started is None or not done:
        return False
    spent_ms = (max(done) - started).total_seconds() * 1000
    return spent_ms < min_trial_ms * len(answered)


def participant_codes(store: Store, crowd: CrowdConfig, secret: bytes) -> list[dict[str, Any]]:
    """One row per evaluator who finished: ``evaluator, participant, code, too_fast`` (the
    per-participant codes, for checking submissions). A set finished too fast was shown no
    code; its code is listed all the same, for the researcher to give after a review.

    Examples
    --------
    >>> from nlgeval.experiment.config import CrowdConfig
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     participant_codes(store, CrowdConfig(participant_codes=True), b"key")
    []
    """
    evs, answered = finished_sets(store)
    out = []
    for e in evs:
        fast = too_fast(e.started_at, answered.get(e.id, []), crowd.min_trial_ms)
        code = completion_code(secret, code_subject(e.participant, e.name))
        out.append({"evaluator": e.name, "participant": e.participant or "",
                    "code": code, "too_fast": fast})
    return out
