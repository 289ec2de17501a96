"""Wordings people give of two tool messages: an expired certificate named in prose (the family,
which asserts none of its candidates), and Windows' sharing-violation text without its error code."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_an_expired_certificate_in_prose_is_the_family() -> None:
    # pytorch/pytorch#150491
    text = ("I visited the wheel site and discovered that the site's RSA security certificate Expired: "
            "Tuesday, April 1, 2025")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "index-certificate-expired" and found.candidates
    assert stated("The certificate has expired.") == ["index-certificate-expired"]
    # a certificate that is valid, or a word that only contains the letters, is none
    assert stated("The certificate is valid until 2026; my trial expired.") == []
    assert stated("certificates expired_at: null") == []


def test_windows_sharing_violation_without_its_code() -> None:
    # pytorch/pytorch#156413
    text = 'it keeps saying "another program is using this file, the process cannot access it"'
    assert stated(text) == ["windows-file-locked"]
    assert stated("no other program is using the file") == []

