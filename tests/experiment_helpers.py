"""Helpers for the experiment tests: build experiment directories, run a real server process,
and act as an evaluator over HTTP (parsing the pages the way a browser would submit them)."""

from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

ABSOLUTE_CRITERIA = '''
[[criteria]]
name = "quality"
question = "How good is the text?"
definition = "Readable, natural, complete."
tool = "vds"
scale = "meteo5"

[[criteria]]
name = "fluency"
question = "How fluent is the text?"
tool = "vas"
min = 0
max = 100
left_label = "not fluent"
right_label = "perfectly fluent"
'''

RELATIVE_CRITERIA = '''
[[criteria]]
name = "fluency"
question = "Which text reads better?"
tool = "vas"
left_label = "A much better"
right_label = "B much better"

[[criteria]]
name = "adequacy"
question = "Which text is more adequate?"
tool = "vds"
scale = "relative5"
'''


def write_experiment(
    directory: Path,
    *,
    mode: str = "absolute",
    systems: int = 3,
    items: int = 6,
    evaluators: int = 3,
    practice: int = 1,
    criteria: str | None = None,
    extra: str = "",
    questionnaire: bool = True,
    text_of: dict[tuple[str, str], str] | None = None,
    database: str | None = None,
) -> Path:
    """An experiment directory with synthetic outputs ``S1..Sn`` x ``i1..im`` (+ practice items
    ``p1..``), whose text names its system and item (so a page shows which output it is)."""
    directory.mkdir(parents=True, exist_ok=True)
    sys_names = [f"S{k}" for k in range(1, systems + 1)]
    item_names = [f"i{k}" for k in range(1, items + 1)]
    prac = [f"p{k}" for k in range(1, practice + 1)]
    rows = []
    for it in item_names + prac:
        for s in sys_names:
            text = (text_of or {}).get((s, it), f"Output of {s} for {it}.")
            rows.append({"system": s, "item": it, "text": text})
    pd.DataFrame(rows).to_csv(directory / "outputs.csv", index=False)
    pd.DataFrame({"item": item_names + prac,
                  "text": [f"input data of {i}" for i in item_names + prac]}).to_csv(
        directory / "context.csv", index=False)
    if criteria is None:
        criteria = RELATIVE_CRITERIA if mode == "relative" else ABSOLUTE_CRITERIA
    cfg = [f'title = "Test experiment ({mode})"', f'mode = "{mode}"', "seed = 11",
           'introduction = "Please **judge** the texts."', 'instructions = "Be careful."']
    if mode != "triangle":
        cfg += [f"evaluators = {evaluators}", f"practice = {practice}",
                f"practice_items = {prac!r}".replace("'", '"')]
    if database:
        cfg.append(f'database = "{database}"')
    text = "\n".join(cfg) + "\n" + extra + "\n" + (criteria if mode != "triangle" else "")
    if questionnaire:
        text += '''
[[questionnaire]]
name = "native"
question = "Is English your first language?"
type = "choice"
options = ["yes", "no"]
required = true
'''
    (directory / "experiment.toml").write_text(text, encoding="utf-8")
    return directory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    """``nlgeval serve`` in a child process (so it can be SIGKILLed). ``port`` 0: a free one,
    chosen when the server starts."""

    directory: Path
    port: int
    database: str | None = None
    threads: int = 8
    processes: int = 1
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    log: Path | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> ServerProcess:
        """Start the server and wait until it answers ``/healthz`` (``RuntimeError`` when it
        exits, or does not answer within ``timeout`` seconds: generous, a loaded machine
        takes a while to import everything). A port found free can be bound by any other
        process before the server binds it: with ``port`` 0 another free port is then tried,
        a given port (a restart on the same address) is tried again until the deadline."""
        deadline = time.monotonic() + timeout
        pick = self.port == 0
        while True:
            if pick:
                self.port = free_port()
            if self._spawn_and_wait(deadline):
                return self
            if time.monotonic() > deadline:
                raise RuntimeError(f"port {self.port} stayed in use: {self.log.read_text()}")
            if not pick:
                time.sleep(0.5)

    def _spawn_and_wait(self, deadline: float) -> bool:
        """One attempt: True once the server answers; False when it exited because its port
        was taken; ``RuntimeError`` when it exited otherwise or did not answer in time."""
        import requests

        cmd = [sys.executable, "-c", "from nlgeval.cli import main; main()", "serve",
               str(self.directory), "--port", str(self.port), "--threads", str(self.threads),
               "--processes", str(self.processes)]
        if self.database:
            cmd += ["--database", self.database]
        self.log = self.directory / f"server-{self.port}-{time.time_ns()}.log"
        fh = open(self.log, "w")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
                                     env={**os.environ, "CI": "1", **self.env})
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log.read_text():
                    return False
                raise RuntimeError(f"server exited: {self.log.read_text()}")
            try:  # read until the deadline: the port is bound before the workers start, and
                # a poll given up on would still be served later (and counted by tests)
                wait = max(1.0, deadline - time.monotonic())
                if requests.get(self.base + "/healthz", timeout=(1, wait)).status_code == 200:
                    return True
            except requests.RequestException:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start: {self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no clean-up, no flushing, like a crashed machine process."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def running_server(directory: Path, **kw: object) -> Iterator[ServerProcess]:
    srv = ServerProcess(directory, 0, **kw).start()  # type: ignore[arg-type]
    try:
        yield srv
    finally:
        srv.stop()


# ------------------------------------------------------------------------------ page parsing
_INPUT = re.compile(r"<input\b([^>]*)>", re.S)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def inputs(page: str) -> list[dict[str, str]]:
    """Attributes of every ``<input>`` on a page (values unescaped)."""
    out = []
    for m in _INPUT.finditer(page):
        attrs = {k: html.unescape(v) for k, v in _ATTR.findall(m.group(1))}
        if " checked" in m.group(1):
            attrs["checked"] = "1"
        out.append(attrs)
    return out


def form_action(page: str) -> str:
    m = re.search(r'<form method="post" action="([^"]+)"', page)
    assert m, page[:2000]
    return html.unescape(m.group(1))


def csrf_of(page: str) -> str:
    for a in inputs(page):
        if a.get("name") == "csrf":
            return a["value"]
    raise AssertionError("no csrf field on page")


def answer_form(page: str, rng: object) -> dict[str, str]:
    """A complete, valid answer to the trial (or questionnaire) form on ``page``: one random
    option per radio group, every slider moved to a random allowed value."""
    import numpy as np

    assert isinstance(rng, np.random.Generator)
    data: dict[str, str] = {"csrf": csrf_of(page)}
    radios: dict[str, list[str]] = {}
    moved: list[str] = []
    for a in inputs(page):
        t, name = a.get("type"), a.get("name", "")
        if t == "hidden":  # a browser sends every hidden field (csrf, display time, ...)
            data[name] = a.get("value", "")
        elif t == "radio":
            radios.setdefault(name, []).append(a["value"])
        elif t == "range":
            lo, hi = float(a["min"]), float(a["max"])
            data[name] = f"{rng.integers(int(lo), int(hi) + 1)}"
            moved.append(name + "_moved")
    for name in moved:  # what the page's script does when the slider is moved
        data[name] = "1"
    for name, vals in radios.items():
        data[name] = vals[int(rng.integers(len(vals)))]
    return data


@dataclass
class HttpEvaluator:
    """An evaluator driving the site with ``requests`` (cookies kept like a browser)."""

    base: str
    token: str
    session: object = None
    acked: list[int] = field(default_factory=list)  # trial ids whose POST got the redirect
    latencies: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        import requests

        self.session = requests.Session()

    @property
    def url(self) -> str:
        return f"{self.base}/e/{self.token}"

    def _timed(self, method: str, url: str, **kw: object):  # noqa: ANN202
        t0 = time.perf_counter()
        r = self.session.request(method, url, timeout=30, allow_redirects=False, **kw)
        self.latencies.append(time.perf_counter() - t0)
        return r

    def step(self, rng: object) -> str:
        """Load the current page and submit it; returns what was done: 'start', 'trial',
        'questionnaire' or 'done'."""
        r = self._timed("GET", self.url)
        assert r.status_code == 200, (r.status_code, r.text[:500])
        page = r.text
        if "/start" in page and 'class="plan"' in page:
            r = self._timed("POST", form_action_abs(self.base, page),
                            data={"csrf": csrf_of(page)})
            assert r.status_code == 303, r.status_code
            return "start"
        if 'action="/e/' in page and "/trial/" in page:
            action = form_action(page)
            trial_id = int(action.rsplit("/", 1)[1])
            r = self._timed("POST", self.base + action, data=answer_form(page, rng))
            assert r.status_code == 303, (r.status_code, r.text[:500])
            self.acked.append(trial_id)
            return "trial"
        if "/questionnaire" in page:
            r = self._timed("POST", form_action_abs(self.base, page),
                            data=answer_form(page, rng))
            assert r.status_code == 303, r.status_code
            return "questionnaire"
        return "done"


def race_submit(ev: HttpEvaluator, rng: object, n: int = 8) -> list[int]:
    """Submit the current trial ``n`` times at once (a frantic double click); returns the
    status codes. The trial is recorded as acknowledged once."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    page = ev.session.get(ev.url, timeout=30).text  # type: ignore[attr-defined]
    action = form_action(page)
    data = answer_form(page, rng)
    cookies = ev.session.cookies.get_dict()  # type: ignore[attr-defined]

    def post(_: int) -> int:
        return requests.post(ev.base + action, data=data, cookies=cookies, timeout=30,
                             allow_redirects=False).status_code

    with ThreadPoolExecutor(n) as pool:
        codes = list(pool.map(post, range(n)))
    ev.acked.append(int(action.rsplit("/", 1)[1]))
    return codes


def form_action_abs(base: str, page: str) -> str:
    return base + form_action(page)


def join_as(base: str, jt: str, pid: str) -> str:
    """The open sign-up link as a new browser (a new connection, so a server with several
    processes may hand it to any) in the participant's platform session (``SESSION_ID``,
    which lets a new browser of the same participant back into their set): GET the form,
    POST it; returns the trial set's token, or '' when the study is full."""
    import requests

    with requests.Session() as s:
        page = s.get(f"{base}/join/{jt}?PROLIFIC_PID={pid}&SESSION_ID=s-{pid}", timeout=30).text
        r = s.post(f"{base}/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": pid,
                                              "SESSION_ID": f"s-{pid}"},
                   allow_redirects=False, timeout=30)
    assert r.status_code in (303, 409), r.status_code
    return r.headers["Location"].rsplit("/", 1)[1] if r.status_code == 303 else ""


def writers_order(store_a: object, store_b: object) -> list[str]:
    """Two join-like transactions, the first holding on until released: the order in which
    things happened. ``Store.write`` + ``Store.serialize`` must make the second wait for the
    first to commit (``['released', 'a ends', 'b in']``); without it, the second gets
    in while the first still runs. ``store_a``/``store_b`` may be two Stores on one database
    (like two server processes)."""
    import threading

    entered, trying, release = threading.Event(), threading.Event(), threading.Event()
    order: list[str] = []

    def a() -> None:
        with store_a.write() as s:  # type: ignore[attr-defined]
            store_a.serialize(s)  # type: ignore[attr-defined]
            entered.set()
            release.wait(60)  # set once b waits for the write: 60 s only bounds a hang
            order.append("a ends")  # then commits

    def b() -> None:
        entered.wait(60)
        trying.set()
        with store_b.write() as s:  # type: ignore[attr-defined]
            store_b.serialize(s)  # type: ignore[attr-defined]
            order.append("b in")

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    trying.wait(60)  # b is about to ask for the write: give it time to get (and wait) there
    time.sleep(0.5)
    order.append("released")
    release.set()
    ta.join(60)
    tb.join(60)
    return order


def frozen_login_clock(monkeypatch: Any, start: float = 1000.0) -> list[float]:
    """Put the researcher log-in throttle on the test's clock: ``time.monotonic`` as the
    researcher views see it reads ``clock[0]`` (returned; move it by hand), their other uses of
    ``time`` are the real ones. On a loaded machine a request (a password check) could take
    longer than the throttle's 1 s back-off, so the attempt after it was looked at, not refused."""
    import types

    from nlgeval.experiment import researcher

    clock = [start]
    monkeypatch.setattr(researcher, "time", types.SimpleNamespace(
        monotonic=lambda: clock[0], time=time.time))
    return clock


def spin_until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll ``condition()`` (every millisecond) until it is truthy: for a test that waits for
    its own threads to reach a state. ``AssertionError`` naming ``what`` after ``timeout``
    seconds, instead of spinning for ever when the product never gets there."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(0.001)


def wait_until(page: Any, expression: str, timeout: float = 15.0) -> None:
    """Poll ``page.evaluate(expression)`` until it is truthy (``AssertionError`` after
    ``timeout`` seconds). Playwright's ``page.wait_for_function`` with a string compiles the
    expression with ``eval`` inside the page when it has to poll, which the experiment's
    Content Security Policy (``script-src 'self'``) refuses: the test then failed only when
    the condition was not true at once, i.e. on a loaded machine. ``page.evaluate`` runs
    through the debugging protocol, which the policy does not cover."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {expression}")
        page.wait_for_timeout(50)


def settles(page: Any, read: Callable[[], Any], want: Any, timeout: float = 15.0) -> Any:
    """Poll ``read()`` until it returns ``want`` (and return it); ``AssertionError`` naming the
    last value after ``timeout`` seconds. For page state read after an input action: Playwright's
    ``tap()``, ``keyboard.press`` or ``mouse.click`` return once Chromium has taken the events,
    and the page's handlers may run after a read that follows at once (``page.evaluate`` and
    locator reads take another channel), so on a loaded machine an immediate read can still see
    the old state. A wrong ``want`` still fails, after the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if got == want:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s: still {got!r}, "
                                 f"expected {want!r}")
        page.wait_for_timeout(50)


@contextmanager
def delivered(page: Any, event: str = "click", timeout: float = 15.0) -> Iterator[None]:
    """Run the block (an input action), then wait until the page has received ``event``
    (listened for on ``document``, capture phase, once): the state the event leads to may then
    be read, even when it is not known in advance (where a slider click lands) or equal to the
    old one (a click on a slider's end that is already there). ``AssertionError`` after
    ``timeout`` seconds when the event never comes."""
    page.evaluate("""ev => { window.__nlgevalSeen = false;
        document.addEventListener(ev, () => { window.__nlgevalSeen = true; },
                                  {once: true, capture: true}); }""", event)
    yield
    try:
        wait_until(page, "window.__nlgevalSeen === true", timeout)
    except AssertionError:
        raise AssertionError(f"timed out after {timeout:g} s: the page never got a {event!r} "
                             "event") from None


def tab_until(page: Any, expression: str, limit: int = 40, timeout: float = 15.0) -> None:
    """Press Tab until ``expression`` (evaluated in the page) is truthy, at most ``limit``
    times; after each Tab, wait for the focus to have moved before testing, so that a Tab
    handled late is not pressed again (which would step past the target)."""
    for _ in range(limit):
        page.evaluate("() => { window.__nlgevalFocus = document.activeElement; }")
        page.keyboard.press("Tab")
        wait_until(page, "document.activeElement !== window.__nlgevalFocus", timeout)
        if page.evaluate(expression):
            return
    raise AssertionError(f"{limit} presses of Tab never reached: {expression}")
