"""The researcher's log-in, kept honest: a back-off after failed log-ins (not a lock) and
sessions held server-side, so that logging out or setting a new password ends every copy of
a session cookie (:mod:`nlgeval.experiment.researcher` uses them)."""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from nlgeval.experiment.storage import Store, utcnow
from nlgeval.experiment.storage.researcher import (
    add_session,
    drop_session,
    replace_password,
    session_exists,
)

PASSWORD_KEY = "researcher_password"
MAX_FAILS = 5  # failed log-ins per client address and window before backing off (429)
FAIL_WINDOW_S = 300


@dataclass
class LoginThrottle:
    """Failed log-ins per client address (one per app): after ``free`` failures within
    ``window`` seconds each further attempt must wait ``base * 2**k`` seconds (k = failures
    beyond ``free``, at most ``cap``) after the last failure. A back-off, not a lock: the
    real researcher behind the same address (a proxy, a campus network) waits seconds, never
    the whole window, while a guesser gets a few attempts a minute.

    Examples
    --------
    >>> t = LoginThrottle(free=2, base=1.0, cap=30.0, window=300)
    >>> t.record("10.0.0.1", now=0.0); t.record("10.0.0.1", now=1.0)
    >>> t.wait("10.0.0.1", now=1.5), t.wait("10.0.0.2", now=1.5)  # half a second more
    (0.5, 0.0)
    >>> t.record("10.0.0.1", now=2.0); t.wait("10.0.0.1", now=2.0)  # doubled
    2.0
    >>> t.wait("10.0.0.1", now=400.0)  # the window has passed
    0.0
    """

    free: int = MAX_FAILS
    base: float = 1.0
    cap: float = 30.0
    window: float = FAIL_WINDOW_S
    fails: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait(self, who: str, now: float) -> float:
        """Seconds ``who`` must still wait before an attempt is looked at (0: go ahead)."""
        with self.lock:
            recent = [t for t in self.fails.get(who, []) if now - t < self.window]
            self.fails[who] = recent
        if len(recent) < self.free:
            return 0.0
        delay = min(self.cap, self.base * 2.0 ** (len(recent) - self.free))
        return max(0.0, recent[-1] + delay - now)

    def record(self, who: str, now: float) -> None:
        """Count one failed log-in of ``who`` at time ``now``."""
        with self.lock:
            self.fails.setdefault(who, []).append(now)

    def clear(self, who: str) -> None:
        """Forget ``who``'s failures (after a successful log-in)."""
        with self.lock:
            self.fails.pop(who, None)


def _sid_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def start_session(store: Store) -> str:
    """A new researcher session: its random id (for the signed cookie), stored as a hash.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     sid = start_session(store)
    ...     alive = session_alive(store, sid, 8)
    ...     end_session(store, sid)
    ...     alive, session_alive(store, sid, 8)
    (True, False)
    """
    sid = secrets.token_urlsafe(24)
    add_session(store, _sid_hash(sid))
    return sid


def session_alive(store: Store, sid: str, hours: float) -> bool:
    """Whether session ``sid`` exists server-side and is younger than ``hours``."""
    return session_exists(store, _sid_hash(sid), since=utcnow() - timedelta(hours=hours))


def end_session(store: Store, sid: str) -> None:
    """Forget session ``sid`` (log-out)."""
    drop_session(store, _sid_hash(sid))


def set_password(store: Store, password_hash: str) -> None:
    """Store the researcher's password hash and end every researcher session.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     set_password(store, "hash")
    ...     store.meta()[PASSWORD_KEY]
    'hash'
    """
    replace_password(store, PASSWORD_KEY, password_hash)
