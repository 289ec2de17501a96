"""The Host door: the live host's timeouts, and captures recorded and replayed."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Tuple

import pytest

from torchsmith.errors import FetchError, ProfileError
from torchsmith.host import CommandResult, command_key
from torchsmith.host.live import LiveHost
from torchsmith.host.recorded import RecordedHost, RecordingHost, load_capture


def _script(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_live_run_kills_a_hanging_command_and_its_children(tmp_path: Path) -> None:
    # The hanging child keeps stdout open; only killing the whole group ends the wait.
    pid_file = tmp_path / "child.pid"
    hang = _script(tmp_path, "hang", f"sleep 600 &\necho $! > {pid_file}\nsleep 600\n")
    result = LiveHost().run([str(hang)], timeout=0.5)
    assert result.timed_out and not result.ok
    assert "did not answer in time" in result.problem()
    assert _ends(int(pid_file.read_text())), "the background child outlived the kill"


def _ends(pid: int, bound: float = 30.0) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``bound`` seconds; SIGKILL lands asynchronously."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_live_run_reports_missing_executables_without_raising(tmp_path: Path) -> None:
    result = LiveHost().run([str(tmp_path / "nope")], timeout=1)
    assert result.not_found
    assert result.problem() == "nope not found"


def test_live_run_captures_output_and_exit_code(tmp_path: Path) -> None:
    tool = _script(tmp_path, "tool", "echo out; echo err >&2; exit 3\n")
    result = LiveHost().run([str(tool)], timeout=5)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.problem() == "tool exited with 3: err"


def test_live_which_uses_the_given_path(tmp_path: Path) -> None:
    _script(tmp_path, "nvidia-smi", "exit 0\n")
    host = LiveHost({"PATH": str(tmp_path)})
    assert host.which("nvidia-smi") == str(tmp_path / "nvidia-smi")
    assert LiveHost({"PATH": str(tmp_path / "empty")}).which("nvidia-smi") is None


def test_live_read_text_is_none_for_absent_and_replaces_bad_bytes(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"ok \xff")
    host = LiveHost()
    assert host.read_text(str(tmp_path / "f")) == "ok \ufffd"
    assert host.read_text(str(tmp_path / "absent")) is None
    assert host.list_dir(str(tmp_path)) == ["f"]
    assert host.list_dir(str(tmp_path / "absent")) is None


def test_live_platform_describes_this_interpreter() -> None:
    plat = LiveHost().platform()
    assert plat.python_executable == sys.executable
    assert plat.python_version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert plat.cpu_count == os.cpu_count()


def test_live_platform_says_what_the_platform_module_says() -> None:
    import platform  # (the live host reads the same sources without importing it, on Linux CPython)

    plat = LiveHost().platform()
    assert (plat.system, plat.machine, plat.release, plat.python_version, plat.python_implementation) == (
        platform.system(), platform.machine(), platform.release(), platform.python_version(),
        platform.python_implementation())
    if sys.platform.startswith("linux"):
        assert plat.libc == " ".join(platform.libc_ver()).strip()


def test_command_key_is_machine_independent() -> None:
    import torchsmith

    snippet = os.path.join(os.path.dirname(torchsmith.__file__), "snippets", "nvml_probe.py")
    assert command_key(["/usr/bin/python3.11", snippet]) == "python torchsmith:snippets/nvml_probe.py"
    assert command_key(["/usr/bin/nvidia-smi", "-L"]) == "nvidia-smi -L"


def test_recording_then_replaying_gives_the_same_answers(tmp_path: Path) -> None:
    tool = _script(tmp_path, "nvidia-smi", "echo 'GPU 0: Tesla V100'\n")
    (tmp_path / "version").write_text("NVRM version: 535.104.05\n")
    recorder = RecordingHost(LiveHost({"PATH": str(tmp_path)}), environ_keys=["PATH"])
    live_answers = (
        recorder.read_text(str(tmp_path / "version")),
        recorder.read_text(str(tmp_path / "absent")),
        recorder.which("nvidia-smi"),
        recorder.run([str(tool), "-L"], timeout=5),
    )
    capture = json.loads(json.dumps(recorder.capture(slug="t")))
    replay = RecordedHost(capture)
    assert (
        replay.read_text(str(tmp_path / "version")),
        replay.read_text(str(tmp_path / "absent")),
        replay.which("nvidia-smi"),
        replay.run([str(tool), "-L"]),
    ) == live_answers
    assert replay.platform() == LiveHost().platform()
    assert replay.environ() == {"PATH": str(tmp_path)}


def test_replay_treats_unrecorded_things_as_absent() -> None:
    host = RecordedHost({"schema": 1, "platform": LiveHost().platform().to_json()})
    assert host.read_text("/etc/os-release") is None
    assert host.which("nvidia-smi") is None
    assert host.run(["nvidia-smi"]) == CommandResult(["nvidia-smi"], not_found=True)


def test_fetches_are_recorded_without_credentials_and_replayed() -> None:
    page = "<a href='torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl'>t</a>"
    source = RecordedHost({"schema": 1, "platform": LiveHost().platform().to_json(), "urls": {
        "http://u:pw@index.example/simple/torch/": {"status": 200, "body": page},
        "http://u:pw@index.example/simple/absent/": {"status": 404},
    }})
    recorder = RecordingHost(source)
    assert recorder.fetch_url("http://u:pw@index.example/simple/torch/", 5) == page
    with pytest.raises(FetchError) as missing:
        recorder.fetch_url("http://u:pw@index.example/simple/absent/", 5)
    assert missing.value.status == 404 and "pw" not in str(missing.value)
    capture = json.loads(json.dumps(recorder.capture()))
    assert "pw" not in json.dumps(capture["urls"])
    replay = RecordedHost(capture)
    assert replay.fetch_url("http://u:pw@index.example/simple/torch/", 5) == page
    with pytest.raises(FetchError) as again:
        replay.fetch_url("http://index.example/simple/absent/", 5)
    assert again.value.status == 404
    with pytest.raises(FetchError) as unrecorded:
        replay.fetch_url("http://index.example/other/", 5)
    assert unrecorded.value.status is None
    assert "cannot reach http://index.example/other/" in str(unrecorded.value)
    with pytest.raises(FetchError, match="larger than 10 bytes"):
        replay.fetch_url("http://index.example/simple/torch/", 5, max_bytes=10)


def test_live_fetch_reads_a_page_and_refuses_one_too_large() -> None:
    import http.server

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"x" * 100
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    host = LiveHost({"NO_PROXY": "*", "no_proxy": "*"})
    try:
        assert host.fetch_url(url, 10) == "x" * 100
        with pytest.raises(FetchError, match="larger than 99 bytes"):
            host.fetch_url(url, 10, max_bytes=99)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.mark.parametrize("content", ["{", "[]", '{"schema": 99}', '{"schema": 1}'])
def test_bad_captures_give_one_line_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "capture.json"
    path.write_text(content)
    with pytest.raises(ProfileError) as info:
        load_capture(str(path))
    assert "\n" not in str(info.value)


def test_a_read_that_never_returns_is_given_up_at_the_read_timeout(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    # A hung network mount blocks open()/read() in the kernel; here a read blocks until released.
    from torchsmith.host import live

    released = threading.Event()
    entered = threading.Event()

    def hung(path: str, head: int, tail: int = 0) -> Tuple[bytes, int]:
        entered.set()
        released.wait()
        return b"late", 0

    monkeypatch.setattr(live, "read_bounded", hung)
    host = LiveHost(read_timeout=0.2)
    try:
        assert host.read_text(str(tmp_path / "version")) is None
        assert entered.is_set()
    finally:
        released.set()
    monkeypatch.setattr(live, "read_bounded", lambda path, head, tail=0: (b"535.104.05\n", 0))
    assert host.read_text(str(tmp_path / "version")) == "535.104.05\n"


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in interpreter is a sh script")
def test_a_command_that_hung_on_a_question_is_not_asked_again(tmp_path: Path) -> None:
    """`--python` naming an interpreter that hangs costs one wait, not one per question; long work
    (an install, a rollback) with the same interpreter still runs."""
    marker = tmp_path / "asked"
    python = tmp_path / "python3"
    python.write_text(f"#!/bin/sh\nif [ -e '{marker}' ]; then echo answered; exit 0; fi\n"
                      f": > '{marker}'\nexec sleep 30\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    host = LiveHost(environ={"PATH": "/usr/bin:/bin"})
    first = host.run([str(python), "-c", "1"], timeout=1.0)
    assert first.timed_out and marker.exists()
    again = host.run([str(python), "-c", "2"], timeout=15.0)
    assert again.timed_out and "did not answer an earlier call" in again.problem()
    work = host.run([str(python), "-m", "pip", "install", "x"], timeout=600.0)
    assert work.ok and work.stdout.strip() == "answered"
