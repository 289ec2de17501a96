"""`kb refresh` with a credentialed index (used as auth, never printed) and two refreshes at once."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import threading
from pathlib import Path
from typing import Iterator, List

import pytest
from tests.support.httpd import serving

from torchsmith.cli import main
from torchsmith.errors import TorchsmithError
from torchsmith.host.live import LiveHost
from torchsmith.kb import load_kb
from torchsmith.kb.refresh import refresh

PAGES = Path(__file__).parent / "data"
USER, PASSWORD = "alice", "s3c@ret/x"  # an "@" and a "/" inside the password


class _NeedsAuth(http.server.SimpleHTTPRequestHandler):
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    seen: List[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization", ""))
        if self.headers.get("Authorization") != self.expected:
            self.send_error(401, "Unauthorized")
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def auth_server() -> Iterator[str]:
    _NeedsAuth.seen = []
    with serving(functools.partial(_NeedsAuth, directory=str(PAGES))) as address:
        yield address


def test_refresh_sends_the_index_credentials_and_writes_them_nowhere(
        auth_server: str, _own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quoted = PASSWORD.replace("/", "%2F")  # a "/" must be escaped in a URL; the "@" need not
    secret_base = f"http://{USER}:{quoted}@{auth_server}"
    args = ["kb", "refresh", "--torch-index", f"{secret_base}/whl", "--variant", "cu132",
            "--index-url", f"{secret_base}/simple", "--json"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["data"]["new_releases"] == ["2.16.0"]
    assert _NeedsAuth.seen and set(_NeedsAuth.seen) == {_NeedsAuth.expected}
    written = "".join(p.read_text() for p in (_own_cache / "kb-overlay").iterdir())
    for text in (out, written):
        assert "s3c" not in text and quoted not in text and f"{USER}:" not in text
    # The overlay keeps a usable index without the credentials: netrc or --torch-index add them.
    release = load_kb().release("2.16.0")
    assert release is not None and release.variant("cu132").index_url == f"http://{auth_server}/whl/cu132"  # type: ignore[union-attr]
    # Without credentials the index refuses, and the error says so without any secret.
    assert main(["kb", "refresh", "--torch-index", f"http://{auth_server}/whl", "--variant", "cu132"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "\n  " in err


def test_two_refreshes_of_one_overlay_never_interleave(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    entered, go = threading.Event(), threading.Event()
    pages = {"cu132": (PAGES / "whl" / "cu132" / "torch" / "index.html").read_text()}

    def held_fetch(url: str, _timeout: float) -> str:
        entered.set()
        assert go.wait(60)
        return pages["cu132"]

    def quick_fetch(url: str, _timeout: float) -> str:
        return pages["cu132"]

    results: List[object] = []
    first = threading.Thread(target=lambda: results.append(refresh(
        overlay_dir=str(overlay), fetch=held_fetch, index_base="http://mirror/whl", variants=["cu132"],
        today="2026-01-01")))
    first.start()
    try:
        assert entered.wait(60)
        with pytest.raises(TorchsmithError) as caught:
            refresh(overlay_dir=str(overlay), fetch=quick_fetch, index_base="http://mirror/whl",
                    variants=["cu132"], today="2026-01-02")
        assert caught.value.code == "target-busy" and str(overlay) in str(caught.value)
    finally:
        go.set()
        first.join(60)
    assert results and json.loads((overlay / "refresh.json").read_text())["refreshed"] == "2026-01-01"
    # Once the first is done the next one runs, and the overlay it leaves loads.
    refresh(overlay_dir=str(overlay), fetch=quick_fetch, index_base="http://mirror/whl", variants=["cu132"],
            today="2026-01-02", wait=30)
    assert json.loads((overlay / "refresh.json").read_text())["refreshed"] == "2026-01-02"
    assert load_kb(path=str(overlay)).release("2.16.0") is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["overlay"]  # no lock or staging left


def test_fetch_errors_name_the_url_without_credentials(auth_server: str) -> None:
    with pytest.raises(TorchsmithError) as caught:
        LiveHost().fetch_url(f"http://bob:hunter2@{auth_server}/simple/torch/?token=abc", 5)
    assert "HTTP 401" in str(caught.value) and f"{auth_server}/simple/torch/" in str(caught.value)
    assert "hunter2" not in str(caught.value) and "abc" not in str(caught.value)
