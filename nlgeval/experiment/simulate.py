"""``nlgeval experiment simulate``: a dry run of a created study with simulated evaluators.

The real app is started on a temporary local server (waitress on 127.0.0.1, a free port) and
driven over HTTP the way browsers drive it: each simulated evaluator joins through the open
sign-up link with platform-style parameters (``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``;
or takes an unstarted personal link when the study has no open link), ticks the consent box,
answers every practice trial, trial and attention check through the trial form (the fields
the page offers, hidden fields passed on as a browser does), fills in the exit questionnaire
and reaches the thank-you page. Their answers go into the study's database like anyone's, so
``status``, the quality flags, ``export`` and the analyses run on them: the whole pipeline --
design, collection, quality control, export, analysis -- is checked before anyone is paid.

How the simulated evaluators answer (diligent raters following a latent quality per system,
spammers, attention-check failers) is in :mod:`nlgeval.experiment.simulate_raters`; every
random draw comes from ``numpy.random.default_rng`` streams spawned from ``seed``, so a run is
reproducible (the evaluators run one after another, so they get the same sets each time;
``concurrency`` runs several at once, as a load test).

Nobody waits: each simulated evaluator carries a simulated clock that runs ahead of the real
one by the time they would have spent reading and answering (:func:`answer_time_ms`), and the
temporary server -- only this one, never ``serve`` -- stores the times of their pages from that
clock (:attr:`nlgeval.experiment.loaded.Experiment.simulated_clock`). So the times on task,
the speeder check (``[checks] speeder_ms``) and a withheld completion code (``[crowd]
min_trial_ms``) behave in a dry run as in a real study: diligent raters take a human time per
trial, spammers click through and are flagged as speeders. With ``pace_ms`` they wait that
long before each answer instead, on the server's own clock (a load test at a steady pace).
"""

from __future__ import annotations

import html
import http.cookiejar
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.experiment.config import CriterionConfig, ExperimentConfig, format_value
from nlgeval.experiment.loaded import SIMULATED_CLOCK_HEADER
from nlgeval.experiment.simulate_raters import (
    ITEM_SD,
    SimulatedRater,
    behaviour_mix,
    default_qualities,
)
from nlgeval.experiment.views import TrialView, texts_for
from nlgeval.results import Result

if TYPE_CHECKING:
    from nlgeval.experiment.loaded import Experiment

__all__ = ["SimulationResult", "simulate_experiment"]

EVALUATOR_COLUMNS = ["simulated", "behaviour", "participant", "evaluator", "trials", "outcome",
                     "simulated_s"]
_MAX_STEPS = 10_000  # pages per evaluator: far more than any trial set
READING_WPM = 238  # silent reading rate of non-fiction in English (Brysbaert 2019)
ANSWER_MS = 2000  # a diligent rater's time per answer given (a scale, a choice, a span)
CLICK_MS = 500  # a spammer's time per answer: a click, nothing read
PACE_SD = 0.35  # the spread of one trial's time (log scale)
SPEED_SD = 0.25  # the spread of raters' own speed (log scale)


@dataclass(frozen=True)
class SimulationResult(Result):
    """What a dry run did: the latent ``qualities`` the diligent raters followed (the ranking
    an analysis should recover) and one row per simulated evaluator (``simulated`` number,
    ``behaviour``, platform ``participant`` id, the trial set's ``evaluator`` name, pages
    ``trials`` answered, ``outcome``: ``finished``, ``full`` when no set was left, or
    ``already finished`` when an earlier run used the same participant id; ``simulated_s``:
    the seconds from their first page to their last on their simulated clock), the HTTP
    ``requests`` made and the real (wall-clock) ``seconds`` the run took. The simulated time:
    ``simulated_seconds``, from the first page of the first evaluator to the last answer of
    the last on the simulated clocks (what the stored times span; the evaluators run one
    after another for real, but their simulated sessions overlap as a crowd's do), and
    ``evaluator_seconds``, the sum of their sessions (the person-time a real study pays).
    With ``pace_ms`` the clocks are the real one.

    Examples
    --------
    >>> r = SimulationResult(Path("study"), 1, {"A": 0.8}, pd.DataFrame(), 0)
    >>> r.to_dict()["directory"]
    'study'
    >>> format_duration(5025.4), format_duration(42.25), format_duration(0.5)
    ('1 h 23 min 45 s', '42.2 s', '0.5 s')
    """

    directory: Path
    seed: int
    qualities: dict[str, float]
    evaluators: pd.DataFrame
    requests: int
    seconds: float = 0.0
    simulated_seconds: float = 0.0
    evaluator_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "directory": str(self.directory)}


def format_duration(seconds: float) -> str:
    """``seconds`` for people: ``1 h 23 min 45 s``, ``12 min 5 s`` or ``42.2 s``.

    Examples
    --------
    >>> format_duration(3600), format_duration(61.4)
    ('1 h 0 min 0 s', '1 min 1 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    s = int(round(seconds))
    h, m = divmod(s // 60, 60)
    return (f"{h} h " if h else "") + f"{m} min {s % 60} s"


class _Forms(HTMLParser):
    """The post forms of a page: their action and fields (as a browser sees them)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.forms: list[tuple[str, list[dict[str, str]]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method", "").lower() == "post":
            self.forms.append((a.get("action", ""), []))
        elif tag in ("input", "textarea", "select") and self.forms:
            a["_tag"] = tag
            self.forms[-1][1].append(a)


class _Browser:
    """One simulated browser: its own cookies, its own client address (sent as
    ``X-Forwarded-For`` to the server, which trusts one proxy: the simulator) and, unless
    ``paced`` (waiting for real), its own clock: the real one plus the time :meth:`spend`
    added, sent with every request (:data:`SIMULATED_CLOCK_HEADER`)."""

    def __init__(self, base: str, address: str, paced: bool = False) -> None:
        self.base = base
        self.address = address
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.opener.addheaders = [("X-Forwarded-For", address)]
        self.requests = 0
        self.paced = paced
        self.ahead_ms = 0

    def spend(self, ms: float) -> None:
        """Let ``ms`` milliseconds pass: on the simulated clock, or for real when paced."""
        if self.paced:
            time.sleep(ms / 1000)
        else:
            self.ahead_ms += int(round(ms))

    def open(self, path: str, data: dict[str, str] | None = None) -> tuple[int, str, str]:
        """``(status, final URL path, page)`` of a GET (or a POST of ``data``), redirects
        followed."""
        body = None if data is None else urllib.parse.urlencode(data).encode()
        self.requests += 1
        if not self.paced:
            now = str(int(time.time() * 1000) + self.ahead_ms)
            self.opener.addheaders = [("X-Forwarded-For", self.address),
                                      (SIMULATED_CLOCK_HEADER, now)]
        try:
            with self.opener.open(self.base + path, data=body, timeout=120) as r:
                return r.status, urllib.parse.urlsplit(r.geturl()).path, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, urllib.parse.urlsplit(e.geturl()).path, e.read().decode()


def answer_time_ms(rng: np.random.Generator, behaviour: str, words: int, answers: int,
                   speed: float = 1.0) -> float:
    """How long a simulated evaluator spends on one page, in milliseconds: a diligent (or an
    attention-check failing) rater reads the ``words`` shown at :data:`READING_WPM` words a
    minute (Brysbaert 2019) and takes :data:`ANSWER_MS` per answer given, times their own
    ``speed``; a spammer reads nothing and clicks (:data:`CLICK_MS` an answer). Each page's
    time varies log-normally around that (:data:`PACE_SD` on the log scale).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = [answer_time_ms(rng, "diligent", 119, 2) for _ in range(4001)]
    >>> abs(float(np.median(t)) / 34_000 - 1) < 0.03  # 30 s reading 119 words, 4 s answering
    True
    >>> float(np.median([answer_time_ms(rng, "spammer", 119, 2) for _ in range(4001)])) < 2000
    True
    """
    noise = float(np.exp(rng.normal(0.0, PACE_SD)))
    if behaviour == "spammer":
        return CLICK_MS * max(answers, 1) * noise
    return (words * 60_000 / READING_WPM + ANSWER_MS * max(answers, 1)) * speed * noise


@dataclass
class _Pace:
    """A simulated evaluator's time per page: ``wait_ms`` (a fixed wait, for real), or drawn
    from ``rng`` by :func:`answer_time_ms` with the rater's own ``speed``."""

    rng: np.random.Generator
    behaviour: str
    wait_ms: int = 0
    speed: float = 1.0

    def trial(self, x: Experiment, trial: TrialView, fields: list[dict[str, str]],
              data: dict[str, str]) -> float:
        """The time spent on a trial page: its texts (and input) read, its answers given."""
        if self.wait_ms:
            return self.wait_ms
        shown = [t["text"] for t in texts_for(x, trial)] + [x.contexts.get(trial.item, "")]
        hidden = _hidden(fields)
        answers = sum(k not in hidden and not k.endswith("_moved") for k in data)
        answers += len(json.loads(data["spans"])) if "spans" in data else 0
        return answer_time_ms(self.rng, self.behaviour, sum(len(t.split()) for t in shown),
                              answers, self.speed)

    def questionnaire(self, questions: int) -> float:
        """The time spent on the exit questionnaire (no wait when paced)."""
        return 0 if self.wait_ms else answer_time_ms(self.rng, self.behaviour, 0, questions,
                                                     self.speed)


def _hidden(fields: list[dict[str, str]]) -> dict[str, str]:
    return {f["name"]: f.get("value", "") for f in fields
            if f.get("type") == "hidden" and f.get("name")}


def _options(fields: list[dict[str, str]], name: str) -> list[dict[str, str]]:
    return [f for f in fields if f.get("name") == name]


def _scale_answer(offered: list[dict[str, str]], lo: float, hi: float, frac: float
                  ) -> str | None:
    """The offered value nearest to ``frac`` of the way from ``lo`` to ``hi``: a radio
    button's value, or a slider's value on its step."""
    target = lo + frac * (hi - lo)
    radios = [f["value"] for f in offered if f.get("type") == "radio"]
    if radios:
        return min(radios, key=lambda v: abs(float(v) - target))
    ranges = [f for f in offered if f.get("type") == "range"]
    if not ranges:
        return None
    r = ranges[0]
    mn, mx, step = float(r["min"]), float(r["max"]), float(r.get("step") or 1)
    return format_value(min(mx, max(mn, mn + round((target - mn) / step) * step)))


def answer_trial(fields: list[dict[str, str]], trial: TrialView, cfg: ExperimentConfig,
                 rater: SimulatedRater, text: str = "") -> dict[str, str]:
    """The posted trial form: the page's hidden fields, then one answer per criterion (a
    slider marked as moved), the odd text of a triangle, the best and worst text of a
    best-worst tuple, or the error spans in the output ``text`` (MQM; ESA also scores it).

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.experiment.sandbox import example_config
    >>> fields = [{"type": "hidden", "name": "csrf", "value": "x"}] + [
    ...     {"type": "radio", "name": "c0", "value": str(v)} for v in range(1, 6)] + [
    ...     {"type": "range", "name": "c1", "min": "0", "max": "100", "step": "1"}]
    >>> rater = SimulatedRater("diligent", np.random.default_rng(0), {"A": 1.0}, {})
    >>> with example_config() as cfg:
    ...     data = answer_trial(fields, TrialView(1, 1, False, "i1", "A", None, None, None),
    ...                         cfg, rater)
    >>> data["csrf"], data["c0"], data["c1_moved"], int(data["c1"]) > 80
    ('x', '5', '1', True)
    """
    data = _hidden(fields)
    if _options(fields, "odd"):
        data["odd"] = str(rater.odd_one_out(trial))
        return data
    if _options(fields, "best"):
        best, worst = rater.best_worst(trial)
        data.update(best=str(best), worst=str(worst))
        return data
    if "spans" in data:
        _answer_spans(data, fields, trial, cfg, rater, text)
    criteria = getattr(cfg.options, "scale", None)
    if criteria is not None:  # ESA: the 0-100 score after the spans
        _answer_scale(data, fields, 0, criteria, trial, rater)
        return data
    for i, c in enumerate(cfg.criteria):
        _answer_scale(data, fields, i, c, trial, rater)
    return data


def _answer_scale(data: dict[str, str], fields: list[dict[str, str]], i: int,
                  c: CriterionConfig, trial: TrialView, rater: SimulatedRater) -> None:
    """Criterion ``i``'s answer (field ``c<i>``; a slider marked as moved)."""
    key = f"c{i}"
    v = _scale_answer(_options(fields, key), c.scale_min, c.scale_max,
                      rater.fraction(trial, c.name))
    if v is not None:
        data[key] = v
        if any(f.get("type") == "range" for f in _options(fields, key)):
            data[f"{key}_moved"] = "1"


def _answer_spans(data: dict[str, str], fields: list[dict[str, str]], trial: TrialView,
                  cfg: ExperimentConfig, rater: SimulatedRater, text: str) -> None:
    """The error spans (MQM, ESA) as the page's script posts them: JSON in ``spans``, and
    "no errors" ticked when there are none."""
    opts = cfg.options
    # a non-translation error replaces every other (Freitag et al. 2021): never picked here
    skip = getattr(opts, "non_translation", None)
    cats = [c for c in getattr(opts, "category_names", ("",)) if c != skip] or [""]
    spans = rater.error_spans(trial, text, cats, list(opts.severities))
    data["spans"] = json.dumps(spans)
    if not spans and any(f.get("name") == "no_errors" for f in fields):
        data["no_errors"] = "1"


def _answer_start(fields: list[dict[str, str]], cfg: ExperimentConfig,
                  rater: SimulatedRater) -> dict[str, str]:
    """The Start form: consent ticked, screening answered so as to pass."""
    data = _hidden(fields)
    if any(f.get("name") == "consent" for f in fields):
        data["consent"] = "1"
    for q in cfg.crowd.screening if cfg.crowd is not None else ():
        ok = [o for o in q.options if q.passes(o)]
        data[f"s_{q.name}"] = rater.pick(ok or list(q.options))
    return data


def _answer_questionnaire(fields: list[dict[str, str]], cfg: ExperimentConfig,
                          rater: SimulatedRater) -> dict[str, str]:
    data = _hidden(fields)
    for q in cfg.questionnaire:
        if q.type == "choice":
            data[f"q_{q.name}"] = rater.pick(list(q.options))
        elif q.type == "number":
            data[f"q_{q.name}"] = str(int(rater.rng.integers(18, 70)))
        elif q.required:
            data[f"q_{q.name}"] = "simulated answer"
    return data


def _sign_up(browser: _Browser, x: Experiment, k: int) -> str | None:
    """Join through the open sign-up link as participant ``k`` (platform-style parameters);
    the path of the personal page, or ``None`` when the study is full."""
    crowd = x.cfg.crowd
    assert crowd is not None
    pid = f"SIM{k:04d}"
    params = {crowd.id_keys[0]: pid}
    params.update({s: f"{pid}-session" for s in crowd.session_keys})
    if "STUDY_ID" in crowd.params:
        params["STUDY_ID"] = "dry-run"
    jpath = f"/join/{x.meta['join_token']}"
    _s, _p, page = browser.open(jpath + "?" + urllib.parse.urlencode(params))
    forms = _Forms(page).forms
    if not forms:
        raise InputError(f"simulated participant {pid}: no sign-up form at the open link",
                         file=x.cfg.path)
    status, path, _page = browser.open(forms[0][0], _hidden(forms[0][1]))
    if status == 429:
        raise InputError(f"simulated participant {pid}: the sign-up limit per address refused "
                         "them", file=x.cfg.path)
    return path if "/e/" in path else None


def _fail(x: Experiment, who: int, status: int, path: str, page: str) -> InputError:
    """The error of a page a browser would not expect, with what the page says."""
    main = re.search(r"<main[^>]*>(.*?)</main>", page, re.S)
    said = html.unescape(re.sub(r"<[^>]+>", " ", main.group(1) if main else page))
    return InputError(f"simulated evaluator {who}: the server answered {status} at "
                      f"{re.sub(r'/e/[^/]+', '/e/<token>', path)}: "
                      f"{' '.join(said.split())[:300]}",
                      file=x.cfg.path)


def _take_part(browser: _Browser, x: Experiment, rater: SimulatedRater, who: int,
               entry: str | None, pace: _Pace) -> dict[str, Any]:
    """One simulated evaluator from their link to the thank-you page."""
    row: dict[str, Any] = {"simulated": who, "behaviour": rater.behaviour, "participant": "",
                           "evaluator": "", "trials": 0, "outcome": "full"}
    if entry is None:
        row["participant"] = f"SIM{who:04d}"
        entry = _sign_up(browser, x, who)
        if entry is None:
            return row
    token = entry.rsplit("/", 1)[1]
    row["evaluator"] = token  # replaced by the set's name at the end (tokens are secret)
    status, path, page = browser.open(entry)
    for _ in range(_MAX_STEPS):
        if status != 200:
            raise _fail(x, who, status, path, page)
        forms = _Forms(page).forms
        if not forms:
            done = "completion" in page or "Thank" in page
            row["outcome"] = ("stopped" if not done else "finished" if row["trials"]
                              else "already finished")  # a participant id used before
            return row
        action, fields = forms[0]
        if action.endswith("/start"):
            data = _answer_start(fields, x.cfg, rater)
        elif "/trial/" in action:
            trial = TrialView(*x.trials[int(action.rsplit("/", 1)[1])])
            data = answer_trial(fields, trial, x.cfg, rater, texts_for(x, trial)[0]["text"])
            row["trials"] += 1
            browser.spend(pace.trial(x, trial, fields, data))
        elif action.endswith("/questionnaire"):
            data = _answer_questionnaire(fields, x.cfg, rater)
            browser.spend(pace.questionnaire(len(x.cfg.questionnaire)))
        else:
            raise _fail(x, who, status, path, page)
        status, path, page = browser.open(action, data)
    raise _fail(x, who, status, path, "too many pages")


@contextmanager
def _served(directory: Path, database: str | None, simulated_clock: bool = True
            ) -> Iterator[tuple[str, Experiment]]:
    """The study on a waitress server on 127.0.0.1 (a free port) in a background thread.
    The simulator is the server's one trusted proxy: waitress takes each simulated
    participant's address from ``X-Forwarded-For`` (so the sign-up limit per address counts
    them apart); with ``simulated_clock`` the evaluator pages take their time from each
    simulated evaluator's clock (see the module docstring)."""
    from nlgeval.experiment.server import ready_app, waitress_server

    app = ready_app(directory, database=database)
    app.extensions["nlgeval_experiment"]["experiment"].simulated_clock = simulated_clock
    server = waitress_server(app, 4, host="127.0.0.1", port=0, trusted_proxy="127.0.0.1",
                             trusted_proxy_count=1, trusted_proxy_headers="x-forwarded-for")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield (f"http://127.0.0.1:{int(server.effective_port)}",
               app.extensions["nlgeval_experiment"]["experiment"])
    finally:  # the worker threads first (a finishing task still pulls the loop's trigger),
        # then the server, closed from its own loop thread (its trigger), so no socket is
        # pulled from under a running select()
        server.task_dispatcher.shutdown()
        server.trigger.pull_trigger(server.close)
        thread.join(10)
        app.extensions["nlgeval_experiment"]["store"].dispose()


def _personal_links(x: Experiment, n: int) -> list[str]:
    """Personal links of ``n`` sets nobody has started (a study without an open link)."""
    from nlgeval.experiment.status import progress

    prog = progress(x.store)
    free = prog[(prog["started"] == "") & (prog["claimed"] == "")]
    if len(free) < n:
        raise InputError(f"{n} simulated evaluators need as many unstarted trial sets; the "
                         f"study has {len(free)} (create it with --evaluators {n}, or give "
                         f"it an open sign-up link: [crowd])", file=x.cfg.path)
    return [f"/e/{t}" for t in free["token"].iloc[:n]]


def _check_qualities(q: Mapping[str, float], systems: list[str], path: Path) -> None:
    """A quality for a system the study does not have (a typo would leave the real system at
    the 0.5 of a system without one), or outside [0, 1], is an error."""
    for name, v in q.items():
        if systems and name not in systems:
            raise InputError(f"quality for '{name}', which is not a system of the study "
                             f"(systems: {', '.join(systems)})", file=path, option="--quality")
        if not 0.0 <= float(v) <= 1.0:
            raise InputError(f"quality of '{name}' must be in [0, 1], got {v!r}", file=path,
                             option="--quality")


def _raters(x: Experiment, n: int, seed: int, behaviour: str | Mapping[str, int] | None,
            qualities: Mapping[str, float] | None, pace_ms: int
            ) -> tuple[list[SimulatedRater], list[_Pace], dict]:
    """The raters (answers), their paces (times, from streams spawned after the answers':
    adding them left every answer as it was) and the qualities followed."""
    root = np.random.SeedSequence(seed)
    order, items, *each = (np.random.default_rng(s) for s in root.spawn(n + 2))
    timing = [np.random.default_rng(s) for s in root.spawn(n)]
    systems = json.loads(x.meta.get("systems", "[]"))
    q = dict(default_qualities(systems) if qualities is None else qualities)
    _check_qualities(q, systems, x.cfg.path)
    names = sorted({str(t[3]) for t in x.trials.values()})
    effect = dict(zip(names, items.normal(0.0, ITEM_SD, len(names)), strict=True))
    kinds = behaviour_mix(behaviour, n, order)
    paces = [_Pace(r, b, pace_ms, float(np.exp(r.normal(0.0, SPEED_SD))))
             for b, r in zip(kinds, timing, strict=True)]
    return ([SimulatedRater(b, r, q, effect) for b, r in zip(kinds, each, strict=True)],
            paces, q)


def simulate_experiment(
    directory: str | Path,
    *,
    evaluators: int,
    seed: int,
    behaviour: str | Mapping[str, int] | None = None,
    qualities: Mapping[str, float] | None = None,
    database: str | None = None,
    pace_ms: int = 0,
    concurrency: int = 1,
) -> SimulationResult:
    """Run ``evaluators`` simulated evaluators through the created study in ``directory``
    over HTTP (see the module docstring); their answers are stored in the study's database.

    ``behaviour`` mixes ``diligent``, ``spammer`` and ``attention-fail`` evaluators (e.g.
    ``"diligent=4,spammer=1,attention-fail=1"``; default: all diligent); ``qualities`` are the
    systems' latent qualities in [0, 1] (default: 0.8 for the study's first system down to
    0.2 for its last). Nobody waits: the pages' times come from each simulated evaluator's
    clock, ahead of the real one by :func:`answer_time_ms` per page (see the module
    docstring); ``pace_ms`` > 0 waits that long before each answer instead, on the server's
    own clock. ``concurrency``
    evaluators take part at once (a load test of the server): each one's answers stay the
    same, but which set a sign-up link hands to whom then depends on timing.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_study_folder
    >>> with example_study_folder(evaluators=3) as made:
    ...     r = simulate_experiment(made.directory, evaluators=3, seed=1,
    ...                             behaviour="spammer=1")
    >>> r.evaluators[["behaviour", "trials", "outcome"]].to_dict("list")
    {'behaviour': ['diligent', 'diligent', 'spammer'], 'trials': [7, 7, 7], \
'outcome': ['finished', 'finished', 'finished']}
    >>> r.qualities
    {'human': 0.8, 'neural': 0.5, 'template': 0.2}
    """
    if evaluators < 1 or concurrency < 1:
        raise InputError("simulate at least one evaluator, at least one at a time",
                         option="--evaluators")
    if pace_ms < 0:
        raise InputError(f"--pace-ms must be 0 or more, not {pace_ms}", option="--pace-ms")
    directory = Path(directory)
    t0 = time.perf_counter()
    with _served(directory, database, simulated_clock=not pace_ms) as (base, x):
        raters, paces, q = _raters(x, evaluators, seed, behaviour, qualities, pace_ms)
        crowd = x.cfg.crowd
        joining = crowd is not None and crowd.open_link and bool(x.meta.get("join_token"))
        links: list[str | None] = ([None] * evaluators if joining
                                   else list(_personal_links(x, evaluators)))

        def one(k: int) -> tuple[dict[str, Any], int]:
            browser = _Browser(base, f"10.0.{k // 250}.{k % 250 + 1}", paced=bool(pace_ms))
            start = time.time()
            row = _take_part(browser, x, raters[k - 1], k, links[k - 1], paces[k - 1])
            end = time.time() + browser.ahead_ms / 1000  # on the simulated clock
            row.update(simulated_s=round(end - start, 1), _start=start, _end=end)
            return row, browser.requests

        with ThreadPoolExecutor(concurrency) as pool:
            done = list(pool.map(one, range(1, evaluators + 1)))
        from nlgeval.experiment.status import progress

        prog = progress(x.store)
    seconds = time.perf_counter() - t0
    name_of = dict(zip(prog["token"], prog["evaluator"].astype(str), strict=True))
    table = pd.DataFrame([row for row, _n in done], columns=EVALUATOR_COLUMNS)
    table["evaluator"] = table["evaluator"].map(lambda t: name_of.get(t, ""))
    requests = sum(n for _row, n in done)
    span = max(r["_end"] for r, _n in done) - min(r["_start"] for r, _n in done)
    person = sum(r["_end"] - r["_start"] for r, _n in done)
    return SimulationResult(directory, seed, q, table, requests, round(seconds, 3),
                            round(span, 1), round(person, 1))
