"""Inputs that must not hang, exhaust memory or reach the terminal raw: requirement files that are
FIFOs, devices, huge or nested without end; closed standard streams; control sequences in values;
JSON that is not quite JSON (NaN, keys given twice); overlays whose rows lack what is read."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
from tests.robustness.corpus import base_profile
from tests.robustness.harness import check, run_cli, run_subprocess
from tests.support.httpd import serving

import torchsmith
from torchsmith.errors import parse_json_bytes
from torchsmith.host.recorded import RecordedHost
from torchsmith.machine import MAX_GPUS
from torchsmith.output import printable
from torchsmith.probe import probe

KB_DATA = Path(torchsmith.__file__).parent / "kb" / "data"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")


def _env(tmp_path: Path) -> Dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "TORCHSMITH_CACHE_DIR": str(tmp_path / "cache")}


@posix_only
def test_requirement_files_that_never_end_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:  # sparse: 100 MB that cost no disk
        handle.truncate(100 * 1024 * 1024)
    for label, path in (("a FIFO", fifo), ("/dev/zero", Path("/dev/zero")), ("100 MB", big)):
        for option in ("-r", "--project"):
            outcome = run_subprocess(["plan", "--json", option, str(path)], env=_env(tmp_path), bound=60,
                                     label=f"plan {option} <{label}>")
            check(outcome)
            assert outcome.exit_code == 2
            assert outcome.envelope is not None
            assert outcome.envelope["errors"][0]["code"] == "requirement-invalid"


def test_requirement_files_nested_without_end(tmp_path: Path) -> None:
    for number in range(1, 1201):
        (tmp_path / f"r{number}.txt").write_text(f"-r r{number + 1}.txt\n")
    (tmp_path / "r1201.txt").write_text("torch\n")
    outcome = run_cli(["plan", "--json", "-r", str(tmp_path / "r1.txt")],
                      label="plan -r <1,200 nested files>")
    check(outcome)
    assert outcome.envelope is not None and "nested more than" in outcome.envelope["errors"][0]["message"]
    # A diamond of includes is read boundedly too: 2^20 paths through 20 files.
    for number in range(20):
        (tmp_path / f"d{number}.txt").write_text(f"-r d{number + 1}.txt\n-r e{number + 1}.txt\n")
        (tmp_path / f"e{number + 1}.txt").write_text(f"-r d{number + 1}.txt\n")
    (tmp_path / "d20.txt").write_text("torch\n")
    check(run_cli(["plan", "--json", "-r", str(tmp_path / "d0.txt")],
                  label="plan -r <a diamond of includes>"))


@posix_only
@pytest.mark.parametrize(("argv", "stream"), [(["probe"], 1), (["probe", "--json"], 1), (["explain", "-"], 0),
                                              (["explain", "--json", "-"], 0)])
def test_closed_standard_streams(argv: List[str], stream: int, tmp_path: Path) -> None:
    """``torchsmith probe >&-`` and ``torchsmith explain - <&-``: one error line, no traceback."""
    env = {**_env(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "torchsmith", *argv], env=env, capture_output=True,
                          timeout=60, check=False, preexec_fn=lambda: os.close(stream))
    shown = done.stdout.decode() + done.stderr.decode()
    assert "Traceback" not in shown and done.returncode in (1, 2), shown
    assert "error[" in done.stderr.decode() or '"errors"' in done.stdout.decode(), shown


def test_control_sequences_are_shown_escaped(tmp_path: Path) -> None:
    title = "\x1b]0;owned\x07"
    clear = "\x1b[2J\x9b2J\r"
    for argv in (["plan", "--gpu", f"x{title}"], ["plan", "--python", f"/nowhere{clear}"],
                 ["explain", "--no-probe", f"RuntimeError: {title}{clear} CUDA error"]):
        outcome = run_cli(argv, label=f"{argv[0]} <control sequences in a value>")
        check(outcome)
        shown = outcome.stdout + outcome.stderr
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown and "\r" not in shown
        assert "\\x1b" in shown or argv[0] == "explain"  # explain does not echo what it read
    # Our own colours stay when the output is a terminal; anything else is escaped.
    assert printable("\x1b[31mred\x1b[0m\x1b]0;t\x07", keep_colour=True) == "\x1b[31mred\x1b[0m\\x1b]0;t\\x07"


@pytest.mark.parametrize(("text", "problem"), [
    ('{"a": 1, "a": 2}', "appears twice"), ("[NaN]", "NaN"), ("[-Infinity]", "Infinity"),
    ("[1" + "0" * 5000 + "]", "5001 digits"), ("[1e5000]", "out of range")])
def test_json_that_is_not_quite_json_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_json_bytes(text.encode())


def _rows_map(data: object, change: object) -> object:
    """``data`` with every list of objects (a table's rows) replaced by ``change(rows)``."""
    if isinstance(data, dict):
        return {k: change(v) if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
                else _rows_map(v, change) for k, v in data.items()}
    return data


ROW_CORRUPTIONS = {
    "empty rows": lambda rows: [{}],
    "rows without one field each": lambda rows: [{k: v for k, v in r.items() if k != list(r)[n % len(r)]}
                                                 for n, r in enumerate(rows)],
    "null rows": lambda rows: [None],
}


@pytest.mark.parametrize("how", sorted(ROW_CORRUPTIONS))
def test_overlays_whose_rows_lack_what_is_read(how: str, tmp_path: Path) -> None:
    host = tmp_path / "host.json"
    host.write_text(json.dumps(base_profile()))
    for data_file in sorted(KB_DATA.glob("*.json")):
        overlay = tmp_path / f"{data_file.stem}-{how.replace(' ', '-')}"
        overlay.mkdir()
        spoiled = _rows_map(json.loads(data_file.read_text()), ROW_CORRUPTIONS[how])
        (overlay / data_file.name).write_text(json.dumps(spoiled))
        for argv in (["kb", "validate", str(overlay)],
                     ["plan", "--json", "--host", str(host), "--kb", str(overlay)]):
            check(run_cli(argv, label=f"{argv[0]} <{data_file.name}: {how}>"))


def test_version_fields_of_thousands_of_digits_give_one_short_line(tmp_path: Path) -> None:
    text = (KB_DATA / "gpus.json").read_text()
    (tmp_path / "gpus.json").write_text(text.replace('"12.0"', '"12' + "9" * 5000 + '.0"'))
    outcome = run_cli(["kb", "validate", "--json", str(tmp_path)], label="kb validate <5,000-digit versions>")
    check(outcome)
    assert outcome.exit_code == 1
    assert outcome.envelope is not None and len(outcome.envelope["errors"][0]["message"]) < 400


@pytest.mark.parametrize("provenance", ['{"releases": "x"}', '{"refreshed": 5}', "[]",
                                        '{"refreshed": "2026-01-01", "new_releases": [1]}'])
def test_kb_validate_reads_the_refresh_record_too(provenance: str, tmp_path: Path) -> None:
    overlay = tmp_path / "cache" / "kb-overlay"
    overlay.mkdir(parents=True)
    (overlay / "refresh.json").write_text(provenance)
    outcome = run_cli(["kb", "validate"], env={"TORCHSMITH_CACHE_DIR": str(tmp_path / "cache")},
                      label=f"kb validate <refresh.json {provenance}>")
    check(outcome)
    assert outcome.exit_code == 1 and "refresh.json" in outcome.stderr


def test_described_gpus_are_bounded_like_probed_ones() -> None:
    many = ",".join(["8.6"] * 10_000)
    outcome = run_cli(["plan", "--json"], env={"TORCHSMITH_GPUS": many},
                      label="plan <TORCHSMITH_GPUS: 10,000>")
    check(outcome)
    assert outcome.exit_code == 2 and outcome.envelope is not None
    assert "at most 256" in outcome.envelope["errors"][0]["message"]


def test_a_pci_bus_of_thousands_of_display_devices_and_a_huge_os_release() -> None:
    """The PCI fallback keeps at most as many GPUs as a probe does; an os-release value is a name."""
    slots = [f"0000:{n // 256:02x}:{n % 256 // 8:02x}.{n % 8}" for n in range(5000)]
    files = {"/etc/os-release": 'PRETTY_NAME="' + "U" * 4_000_000 + '"\nID=ubuntu\nVERSION_ID="24.04"\n'}
    for slot in slots:
        base = f"/sys/bus/pci/devices/{slot}"
        files.update({f"{base}/vendor": "0x1002\n", f"{base}/device": "0x744c\n",
                      f"{base}/class": "0x030000\n"})
    capture = json.loads((Path(__file__).parents[1] / "hosts" / "linux-x86_64-cpu-only.json").read_text())
    capture["files"] = {**capture.get("files", {}), **files}
    capture["dirs"] = {**capture.get("dirs", {}), "/sys/bus/pci/devices": slots}
    machine = probe(RecordedHost(capture))
    assert machine.rocm is not None and 0 < len(machine.rocm.gpus) <= MAX_GPUS
    assert len(machine.os.distro_name or "") <= 256
    assert len(json.dumps(machine.to_json())) < 200_000


class _HostileIndex(http.server.BaseHTTPRequestHandler):
    """``/drip/…``: headers, then one byte every half second, for ever; anything else: a page of
    more links than any torch index has."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        if self.path.startswith("/drip/"):
            try:
                for _ in range(600):  # bounded: 5 minutes at most, long after the client left
                    self.wfile.write(b"<")
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                return
            return
        self.wfile.write(b"".join(b'<a href="torch-2.0.%d-cp311-cp311-linux_x86_64.whl">x</a>\n' % n
                                  for n in range(60_000)))

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hostile_index() -> Iterator[str]:
    with serving(_HostileIndex) as address:
        yield f"http://{address}"


def test_kb_refresh_against_an_index_that_drips_or_floods(hostile_index: str, tmp_path: Path) -> None:
    env = {"TORCHSMITH_CACHE_DIR": str(tmp_path / "cache")}
    dripped = run_cli(["kb", "refresh", "--json", "--torch-index", f"{hostile_index}/drip/whl", "--variant",
                       "cpu", "--timeout", "1"], env=env,
                      label="kb refresh <an index that drips a byte a time>")
    check(dripped)
    assert dripped.exit_code == 1 and dripped.envelope is not None
    assert "no complete answer within 3 s" in dripped.envelope["errors"][0]["message"]
    flooded = run_cli(["kb", "refresh", "--json", "--torch-index", f"{hostile_index}/whl", "--variant", "cpu",
                       "--timeout", "10"], env=env, label="kb refresh <a page of 60,000 links>")
    check(flooded)
    assert flooded.exit_code == 1 and flooded.envelope is not None
    assert "more than a torch index has" in flooded.envelope["errors"][0]["message"]
