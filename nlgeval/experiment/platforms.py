"""What crowd platforms need besides the completion code: tasks shown in a frame, and the
codes or redirects for participants who do not consent or are screened out.

- **Frames** (``[crowd] frame_ancestors``): MTurk's ExternalQuestion shows the task in an
  ``<iframe>`` of the worker's page. By default no site may frame the pages
  (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``: no click-jacking); listing the
  platform's origins allows exactly those. A framed page is a third-party context, where
  browsers send a ``SameSite=Lax`` cookie with no request, so the session cookie becomes
  ``SameSite=None; Secure; Partitioned`` (HTTPS only, kept per embedding site): serve behind
  HTTPS.
- **Did not consent** (``no_consent_code`` / ``no_consent_redirect_url``): the consent form
  has an "I do not agree" button; the participant's set goes back to the pool (the record of
  who declined is kept, as for an expired lease), and the page shows the code or sends them to
  the redirect (``{code}`` filled in), e.g. Prolific's "no consent" return code.
- **Screened out** (``[[crowd.screening]]`` questions with the answers that ``accept`` lets
  through; ``screened_out_code`` / ``screened_out_redirect_url``): asked with the consent,
  before the first trial; any other answer ends the participation the same way.

Examples
--------
>>> content_security_policy(()).split("; ")[-2]
"frame-ancestors 'none'"
>>> content_security_policy(("https://worker.mturk.com",)).split("; ")[-2]
'frame-ancestors https://worker.mturk.com'
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

PLATFORM_KEYS = {"frame_ancestors", "no_consent_code", "no_consent_redirect_url",
                 "screened_out_code", "screened_out_redirect_url", "screening"}
#: a CSP host source: scheme, host (a leading ``*.`` allowed) and optional port, nothing else
_ORIGIN = re.compile(r"https://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?")
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Screening:
    """A screening question (``[[crowd.screening]]``): a choice asked with the consent;
    an answer outside ``accept`` screens the participant out.

    Examples
    --------
    >>> q = Screening("native", "Is German your first language?", ("yes", "no"), ("yes",))
    >>> q.passes("yes"), q.passes("no")
    (True, False)
    """

    name: str
    question: str
    options: tuple[str, ...]
    accept: tuple[str, ...]

    def passes(self, answer: str) -> bool:
        """Whether ``answer`` lets the participant through."""
        return answer in self.accept


def content_security_policy(frame_ancestors: tuple[str, ...]) -> str:
    """The pages' Content-Security-Policy: nothing from elsewhere, no inline script, and no
    framing unless ``frame_ancestors`` names the sites that may (see the module docstring).

    Examples
    --------
    >>> "frame-ancestors 'none'" in content_security_policy(())
    True
    """
    ancestors = " ".join(frame_ancestors) if frame_ancestors else "'none'"
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"form-action 'self'; frame-ancestors {ancestors}; base-uri 'none'")


@runtime_checkable
class Reader(Protocol):
    """What this module needs of the config's table reader
    (:class:`nlgeval.experiment.config_tables.Reader`), named here so that the config does
    not import back into this module.

    Examples
    --------
    >>> from nlgeval.experiment.config_tables import Reader as ConfigReader
    >>> isinstance(ConfigReader({}, "crowd", Path("experiment.toml")), Reader)
    True
    """

    file: Path

    def __init__(self, table: Mapping[builtins.str, Any], where: builtins.str,
                 file: Path) -> None: ...
    def key(self, k: builtins.str) -> builtins.str: ...
    def fail(self, k: builtins.str, msg: builtins.str) -> Exception: ...
    def str(self, k: builtins.str, default: builtins.str | None = None, *,
            required: bool = False) -> builtins.str: ...
    def strs(self, k: builtins.str) -> tuple[builtins.str, ...]: ...
    def unknown(self, allowed: set[builtins.str]) -> None: ...


def _url(r: Reader, key: str) -> str:
    url = r.str(key, "").strip()
    if url and not url.startswith(("https://", "http://")):
        raise r.fail(key, f"must start with https:// (got {url!r})")
    return url


def _code(r: Reader, key: str) -> str:
    code = r.str(key, "").strip()
    if code and not _CODE.fullmatch(code):
        raise r.fail(key, "may hold letters, digits, '-' and '_' only")
    return code


def _screening(r: Reader, raw: Any) -> tuple[Screening, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise r.fail("screening", "must be an array of tables ([[crowd.screening]])")
    out = []
    for i, t in enumerate(raw):
        q = type(r)(t, f"{r.key('screening')}[{i + 1}]", r.file)
        q.unknown({"name", "question", "options", "accept"})
        options, accept = q.strs("options"), q.strs("accept")
        if len(options) < 2:
            raise q.fail("options", "a screening question needs at least 2 options")
        if not accept or any(a not in options for a in accept):
            raise q.fail("accept", f"must list the options that let a participant through "
                         f"(options: {', '.join(options)})")
        out.append(Screening(q.str("name", required=True).strip(),
                             q.str("question", required=True), options, accept))
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise r.fail("screening", "duplicate screening question names")
    return tuple(out)


def parse_platform(r: Reader, raw: dict[str, Any]) -> dict[str, Any]:
    """The ``[crowd]`` keys of this module (frames, no-consent and screened-out codes and
    redirects, screening questions) as :class:`~nlgeval.experiment.config.CrowdConfig`
    fields; ``r`` reads the ``[crowd]`` table.

    Examples
    --------
    >>> from pathlib import Path
    >>> from nlgeval.experiment.config_tables import Reader
    >>> raw = {"frame_ancestors": ["https://worker.mturk.com"], "no_consent_code": "NOCONS"}
    >>> parse_platform(Reader(raw, "crowd", Path("experiment.toml")), raw)["frame_ancestors"]
    ('https://worker.mturk.com',)
    >>> raw = {"frame_ancestors": ["*"]}
    >>> parse_platform(Reader(raw, "crowd", Path("experiment.toml")), raw)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: experiment.toml, key 'crowd.frame_ancestors': '*' is not ...
    """
    frames = r.strs("frame_ancestors")
    for f in frames:
        if not _ORIGIN.fullmatch(f):
            raise r.fail("frame_ancestors", f"{f!r} is not an https origin (such as "
                         "'https://worker.mturk.com'; a leading '*.' is allowed)")
    return {
        "frame_ancestors": frames,
        "no_consent_code": _code(r, "no_consent_code"),
        "no_consent_redirect_url": _url(r, "no_consent_redirect_url"),
        "screened_out_code": _code(r, "screened_out_code"),
        "screened_out_redirect_url": _url(r, "screened_out_redirect_url"),
        "screening": _screening(r, raw.get("screening")),
    }


def outcome_page(code: str, url: str) -> dict[str, str]:
    """What the "did not consent" / "screened out" page offers: the code and the redirect
    with ``{code}`` filled in (either may be empty).

    Examples
    --------
    >>> outcome_page("NOCONS", "https://app.prolific.com/submissions/complete?cc={code}")
    {'code': 'NOCONS', 'url': 'https://app.prolific.com/submissions/complete?cc=NOCONS'}
    """
    return {"code": code, "url": url.replace("{code}", code) if url else ""}
