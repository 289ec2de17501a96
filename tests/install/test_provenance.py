"""The files a pinned step fetched, checked against the pinned index's own listing."""

from __future__ import annotations

import json

import pytest

from torchsmith.errors import InstallError
from torchsmith.host.live import LiveHost
from torchsmith.host.recorded import RecordedHost
from torchsmith.install.provenance import check_fetched, fetched_from_report

INDEX = "https://download.pytorch.org/whl/cu126"
GOOD = "a" * 64
WHEEL = "torchtriton-3.3.1-py3-none-any.whl"


def _host(page: str) -> RecordedHost:
    return RecordedHost({"schema": 1, "platform": LiveHost().platform().to_json(), "urls": {
        f"{INDEX}/torchtriton/": {"status": 200, "body": page}}})


def _report(url: str, digest: str) -> str:
    info = {"url": url, "archive_info": {"hashes": {"sha256": digest}}}
    item = {"metadata": {"name": "TorchTriton", "version": "3.3.1"}, "download_info": info}
    return json.dumps({"install": [item]})


PAGE = f'<a href="/whl/cu126/{WHEEL.replace("+", "%2B")}#sha256={GOOD}">{WHEEL}</a>\n'


def test_a_file_the_index_lists_with_its_hash_passes() -> None:
    fetched = fetched_from_report(_report(f"https://u:secret@download.pytorch.org/whl/cu126/{WHEEL}", GOOD))
    assert fetched == {"torchtriton": (f"https://download.pytorch.org/whl/cu126/{WHEEL}", GOOD)}
    check_fetched(_host(PAGE), INDEX, fetched)


@pytest.mark.parametrize(("url", "digest", "says"), [
    (f"http://evil.example/simple/{WHEEL}", GOOD, "does not list"),
    (f"https://download.pytorch.org/whl/cu126/{WHEEL}", "b" * 64, "lists " + GOOD),
    (f"https://download.pytorch.org/whl/cu126/{WHEEL}", "", "lists " + GOOD),
])
def test_a_file_from_elsewhere_or_with_another_hash_stops_it(url: str, digest: str, says: str) -> None:
    with pytest.raises(InstallError, match=says) as caught:
        check_fetched(_host(PAGE), INDEX, fetched_from_report(_report(url, digest)))
    assert caught.value.code == "install-provenance"


def test_an_unreadable_listing_vouches_for_nothing() -> None:
    host = RecordedHost({"schema": 1, "platform": LiveHost().platform().to_json(), "urls": {}})
    with pytest.raises(InstallError, match="could not read") as caught:
        check_fetched(host, INDEX, {"torchtriton": (f"{INDEX}/{WHEEL}", GOOD)})
    assert caught.value.code == "install-provenance"
    assert fetched_from_report("not json") == {} and fetched_from_report("[1]") == {}
