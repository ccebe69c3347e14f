"""The download path, for real, against a local HTTP server on 127.0.0.1.

The server serves a tmp directory laid out like raw.githubusercontent.com
(``<owner>/<repo>/<commit>/<path>``), built from the shared corpora files.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlgeval.corpora import load_corpus
from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.store import ChecksumError, cache_folder, fetch, url_for, verify
from nlgeval.errors import DataNotFoundError


def test_url_layout() -> None:
    f = descriptor("webnlg2020").file("system_outputs/Amazon_AI_(Shanghai)/primary.en")
    url = url_for(f, "https://raw.githubusercontent.com")
    assert url == (
        "https://raw.githubusercontent.com/WebNLG/challenge-2020/"
        "328b4c252abd9ca36471f390f9fcbd2650798088/submissions/rdf2text/en/"
        "Amazon_AI_%28Shanghai%29/primary.en"
    )


@pytest.mark.parametrize("name", ["webnlg2020", "e2e"])
def test_download_verify_cache_and_load(download_env, publish, data_dir: Path, name: str) -> None:
    base, root, requests = download_env
    publish(root, data_dir, name)
    downloaded = load_corpus(name)  # no data_dir, no NLGEVAL_DATA: fetch into the cache
    d = descriptor(name)
    assert len(requests) == sum(f.download for f in d.files)
    folder = cache_folder(d)
    assert all(r["status"] == "ok" for r in verify(d, folder))
    local = load_corpus(name, data_dir)
    for attr in ("outputs", "references", "ratings"):
        pd.testing.assert_frame_equal(getattr(downloaded, attr), getattr(local, attr))
    # a second load reads the cache and downloads nothing
    n = len(requests)
    load_corpus(name)
    assert len(requests) == n


def test_novikova_download_has_no_references(download_env, publish, data_dir: Path) -> None:
    base, root, requests = download_env
    publish(root, data_dir, "novikova2017")
    c = load_corpus("novikova2017")
    assert len(c.outputs) == 2460 and len(c.references) == 0
    assert any("without references" in n for n in c.notes)
    assert len(requests) == 2  # the medians CSV and LICENSE.md; the JSONL are derived files


def test_checksum_mismatch_is_rejected_and_not_cached(
    download_env, publish, data_dir: Path
) -> None:
    base, root, requests = download_env
    publish(root, data_dir, "e2e")
    d = descriptor("e2e")
    f = d.file("system_outputs_primary/tgen.tsv")
    served = root / f.repository / f.commit / f.source_path
    served.write_bytes(served.read_bytes().replace(b"Blue Spice", b"Red Spice", 1))
    with pytest.raises(ChecksumError) as exc:
        load_corpus("e2e")
    msg = str(exc.value)
    assert "checksum mismatch" in msg and url_for(f) in msg and f.sha256 in msg
    folder = cache_folder(d)
    assert not (folder / f.path).exists()
    assert not list(folder.rglob(".part-*"))  # no partial file left behind


def test_unreachable_server_says_what_to_do(monkeypatch, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("NLGEVAL_DATA", raising=False)
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NLGEVAL_DOWNLOAD_BASE", f"http://127.0.0.1:{port}")
    with pytest.raises(DataNotFoundError) as exc:
        load_corpus("novikova2017")
    msg = str(exc.value)
    assert f"http://127.0.0.1:{port}/jeknov/EMNLP_17_submission/" in msg
    assert "NLGEVAL_DATA" in msg and "--data-dir" in msg


def test_missing_file_on_server_names_the_url(download_env, data_dir: Path) -> None:
    base, root, requests = download_env
    with pytest.raises(DataNotFoundError) as exc:
        fetch(descriptor("novikova2017"))
    assert base in str(exc.value) and "404" in str(exc.value)


def test_no_download_and_no_local_copy(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NLGEVAL_DATA", raising=False)
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataNotFoundError) as exc:
        load_corpus("webnlg2020", download=False)
    msg = str(exc.value)
    assert "NLGEVAL_DATA" in msg and "nlgeval corpora fetch webnlg2020" in msg


def test_incomplete_data_dir_is_an_error_not_a_download(download_env, tmp_path: Path) -> None:
    base, root, requests = download_env
    bad = tmp_path / "corpora" / "e2e_nlg_challenge"
    bad.mkdir(parents=True)
    with pytest.raises(DataNotFoundError) as exc:
        load_corpus("e2e", tmp_path / "corpora")
    assert "missing" in str(exc.value) and str(bad) in str(exc.value)
    assert requests == []
