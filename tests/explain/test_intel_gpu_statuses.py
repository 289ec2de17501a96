"""Intel GPU statuses: Level Zero's ze_result_t and the Unified Runtime's ur_result_t, read from their
headers into error_vocab.json (tools/error_vocab_refresh.py), then read in a text by name (SYCL's
"Native API returns: N (UR_RESULT_...)") or by number (Triton's Intel backend: "Triton Error [ZE]:
0x..."). The family that speaks lists the candidates; nothing else is read as one of these statuses."""

from __future__ import annotations

from typing import Any, List

from tests.explain.test_error_vocab import TOOL, VOCAB
from tests.explain.test_signatures import KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.extract import extract

FAMILY = "intel-gpu-driver-too-old"

# Both headers' shapes: Level Zero's comment after each value, the Unified Runtime's on the lines before
ZE = """typedef enum _ze_result_t
{
    ZE_RESULT_SUCCESS = 0,                          ///< [Core] success
    ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001,       ///< [Core] device hung, reset, was removed, or driver
                                                    ///< update occurred
    ZE_RESULT_FORCE_UINT32 = 0x7fffffff

} ze_result_t;
"""
UR = """typedef enum ur_result_t {
  /// Success
  UR_RESULT_SUCCESS = 0,
  /// Unknown or internal
  /// error
  UR_RESULT_ERROR_UNKNOWN = 0x7ffffffe,
  /// @cond
  UR_RESULT_FORCE_UINT32 = 0x7fffffff
  /// @endcond
} ur_result_t;
"""


def test_the_headers_enums_are_read_with_their_comments() -> None:
    ze = TOOL.enum_values(TOOL._slash_comments(ZE), "_ze_result_t")
    assert ze[1] == {"name": "ZE_RESULT_ERROR_DEVICE_LOST", "code": 0x70000001,
                     "meaning": "[Core] device hung, reset, was removed, or driver update occurred"}
    ur = TOOL.enum_values(TOOL._slash_comments(UR), "ur_result_t")
    assert ur[1] == {"name": "UR_RESULT_ERROR_UNKNOWN", "code": 0x7FFFFFFE,
                     "meaning": "Unknown or internal error"}
    # the shipped tables hold what their sources listed
    for table in ("ze", "ur"):
        source = next(s for s in VOCAB["sources"].values() if s.get("table") == table)
        assert {r["name"] for r in VOCAB[table]} >= set(source["names"]) and len(source["names"]) > 50


def _errors(text: str) -> List[Any]:
    return [(e.api, e.name, e.code) for e in extract(text, KB).gpu_errors]


def test_statuses_are_read_by_name_and_by_number() -> None:
    sycl = "RuntimeError: Native API failed. Native API returns: 2147483646 (UR_RESULT_ERROR_UNKNOWN)\n"
    assert _errors(sycl) == [("ur", "UR_RESULT_ERROR_UNKNOWN", 0x7FFFFFFE)]
    # Triton's Intel backend prints the number, in hex or in decimal
    assert _errors("RuntimeError: Triton Error [ZE]: 0x70000004\n") == [
        ("ze", "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", 0x70000004)]
    assert _errors("RuntimeError: Triton Error [ZE]: 1879048196\n") == _errors(
        "RuntimeError: Triton Error [ZE]: 0x70000004\n")
    named = "Triton Error [ZE] /tmp/main.cpp:197: ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED\n"
    assert _errors(named)[0][1] == "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED"
    # a number that is no status, or another tool's hex, is not read
    assert _errors("Triton Error [ZE]: 0x12345\n") == []
    assert not any(api == "ze" for api, _, _ in _errors("RuntimeError: Triton Error [CUDA]: 0x70000004\n"))


def test_the_family_speaks_for_a_status_and_lists_candidates() -> None:
    text = "RuntimeError: Native API failed. Native API returns: 2147483646 (UR_RESULT_ERROR_UNKNOWN)\n"
    assert causes(text) == [FAMILY]
    assert causes("RuntimeError: Triton Error [ZE]: 0x78000011\n") == [FAMILY]
    # success is no failure; a CUDA status is the CUDA family's
    assert FAMILY not in causes("zeInit returned ZE_RESULT_SUCCESS\n")
    assert FAMILY not in causes("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED\n")
