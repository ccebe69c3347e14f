"""``nlgeval corpora list | info | fetch`` in-process (CliRunner) and once as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlgeval.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "nlgeval-cache"))


def test_list_json(data_dir: Path) -> None:
    res = runner.invoke(app, ["corpora", "list", "--json", "--data-dir", str(data_dir)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {r["name"] for r in rows} == {"webnlg2020", "e2e", "novikova2017", "wmt21-ted-ende",
                                         "wmt21-ted-zhen", "realsumm"}
    for r in rows:
        assert r["description"] and r["licence"] and r["available_locally"] is True


def test_list_human(data_dir: Path) -> None:
    res = runner.invoke(app, ["corpora", "list", "--data-dir", str(data_dir)])
    assert res.exit_code == 0
    assert "webnlg2020" in res.stdout and "novikova2017" in res.stdout


def test_info_json_counts(data_dir: Path) -> None:
    res = runner.invoke(
        app, ["corpora", "info", "webnlg2020", "--data-dir", str(data_dir), "--json"]
    )
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["name"] == "webnlg2020" and s["n_systems"] == 17 and s["n_raters"] == 88
    assert s["n_rated_outputs"] == 3025 and s["n_ratings"] == 42265
    assert s["location"].endswith("webnlg2020_en_humeval")
    assert s["sources"][0]["commit"] == "328b4c252abd9ca36471f390f9fcbd2650798088"


def test_info_user_corpus_human_readable() -> None:
    res = runner.invoke(app, ["corpora", "info", str(ROOT / "corpora" / "demo")])
    assert res.exit_code == 0, res.output
    assert "systems: 3" in res.stdout and "criterion fluency: ordinal 1-5" in res.stdout


def test_fetch_and_verify_from_local_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path
) -> None:
    import functools
    import http.server
    import shutil
    import threading

    from nlgeval.corpora.descriptor import descriptor

    d = descriptor("novikova2017")
    srv = tmp_path / "srv"
    for f in d.files:
        if f.download:
            dest = srv / f.repository / f.commit / f.source_path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_dir / d.folder / f.path, dest)

    class H(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(H, directory=str(srv))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("NLGEVAL_DOWNLOAD_BASE", f"http://127.0.0.1:{httpd.server_address[1]}")
        res = runner.invoke(app, ["corpora", "fetch", "novikova2017", "--verify", "--json"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    status = {r["path"]: r["status"] for r in out["files"]}
    assert status["emnlp_data_medians.csv"] == "ok" and status["LICENSE.md"] == "ok"
    assert status["references/BAGEL.jsonl"] == "missing"
    assert "references/BAGEL.jsonl" in out["not_downloadable"]


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    d = tmp_path / "bad"
    d.mkdir()
    (d / "outputs.csv").write_text("system,item,txt\nA,i1,x\n", encoding="utf-8")
    (d / "references.csv").write_text("item,ref_id,text\ni1,1,y\n", encoding="utf-8")
    nlgeval = Path(sys.executable).parent / "nlgeval"
    proc = subprocess.run(
        [str(nlgeval), "corpora", "info", str(d)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "outputs.csv, row 1" in lines[0] and "'text'" in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_unknown_corpus_for_fetch() -> None:
    from nlgeval.errors import InputError

    res = runner.invoke(app, ["corpora", "fetch", "nope"])
    assert isinstance(res.exception, InputError) and "webnlg2020" in str(res.exception)
