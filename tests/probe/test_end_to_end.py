"""`torchsmith probe` as a user runs it: a subprocess on this machine with fake executables first
on PATH (tests/fake_bin), then its --record capture, --host profiles and overrides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from torchsmith.host.recorded import load_capture
from torchsmith.machine import Machine
from torchsmith.probe import load_machine, probe

FAKE_BIN = Path(__file__).resolve().parents[1] / "fake_bin"


def _env(tmp_path: Path, fake: Optional[str], **extra: str) -> Dict[str, str]:
    path = os.pathsep.join(p for p in (str(FAKE_BIN / fake) if fake else "", "/usr/bin", "/bin") if p)
    return {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8", **extra}


def _probe(tmp_path: Path, fake: Optional[str], *args: str, **extra: str) -> Dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "torchsmith", "probe", "--json", *args],
        env=_env(tmp_path, fake, **extra), capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    envelope: Dict[str, Any] = json.loads(result.stdout)
    assert envelope["status"] == "ok"
    data: Dict[str, Any] = envelope["data"]
    return data


def _notes(profile: Dict[str, Any]) -> List[str]:
    return [f"[{n['source']}] {n['problem']}" for n in profile["notes"]]


def test_fake_nvidia_smi_gives_gpus_driver_and_cuda(tmp_path: Path) -> None:
    profile = _probe(tmp_path, "h100")
    nvidia = profile["nvidia"]
    assert [g["compute_capability"] for g in nvidia["gpus"]] == ["9.0", "9.0"]
    assert nvidia["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert nvidia["gpus_source"] == "nvidia-smi --query-gpu"
    assert (nvidia["driver_version"], nvidia["driver_cuda"]) == ("535.129.03", "12.2")
    # No libnvidia-ml on this machine: the NVML child fails, which is a note, not an error.
    assert any(n.startswith("[nvml]") for n in _notes(profile))


def test_no_devices_is_a_note(tmp_path: Path) -> None:
    profile = _probe(tmp_path, "no-devices")
    assert any("no NVIDIA device was found" in n for n in _notes(profile))
    assert profile["nvidia"] is None or profile["nvidia"]["gpus"] == []


def test_a_hanging_nvidia_smi_is_killed_at_the_timeout(tmp_path: Path) -> None:
    # The fake nvidia-smi sleeps 600 s: an answer with this note proves it was killed.
    profile = _probe(tmp_path, "hang")
    assert any("nvidia-smi did not answer in time" in n for n in _notes(profile))


def test_no_nvidia_smi_means_no_nvidia_section(tmp_path: Path) -> None:
    profile = _probe(tmp_path, None)
    if not Path("/proc/driver/nvidia/version").exists():
        assert profile["nvidia"] is None


def test_record_then_replay_gives_the_same_machine(tmp_path: Path) -> None:
    record = tmp_path / "rec"
    recorded = _probe(tmp_path, "h100", "--record", str(record))
    replayed = probe(load_capture(str(record / "capture.json")))
    assert replayed == load_machine(str(record / "profile.json")) == Machine.from_json(recorded)
    capture = json.loads((record / "capture.json").read_text(encoding="utf-8"))
    assert any(key.startswith("nvidia-smi --query-gpu=") for key in capture["commands"])


def test_a_capture_keeps_only_the_variables_the_probe_read(tmp_path: Path) -> None:
    record = tmp_path / "rec"
    _probe(tmp_path, "h100", "--record", str(record), CUDA_VISIBLE_DEVICES="1",
           MY_API_TOKEN="do-not-share")
    capture = json.loads((record / "capture.json").read_text(encoding="utf-8"))
    assert capture["environ"].get("CUDA_VISIBLE_DEVICES") == "1"
    assert "MY_API_TOKEN" not in capture["environ"]
    replayed = probe(load_capture(str(record / "capture.json")))
    assert replayed.nvidia is not None and replayed.nvidia.visible == (1,)


def test_a_saved_profile_comes_back_with_host(tmp_path: Path) -> None:
    first = _probe(tmp_path, "h100")
    saved = tmp_path / "host.json"
    saved.write_text(json.dumps(first), encoding="utf-8")
    # No fake nvidia-smi now: the facts come from the file, not from this machine.
    assert _probe(tmp_path, None, "--host", str(saved)) == first


def test_overrides_from_environment_and_flags_flags_win(tmp_path: Path) -> None:
    profile = _probe(tmp_path, "h100", "--gpu", "8.6:RTX 3090", "--platform", "linux-x86_64",
                     TORCHSMITH_DRIVER="550.54.14", TORCHSMITH_GPUS="7.0", TORCHSMITH_ROCM_GFX="gfx1100")
    nvidia = profile["nvidia"]
    assert nvidia["driver_version"] == "550.54.14" and nvidia["driver_version_source"] == "override"
    assert [(g["name"], g["compute_capability"]) for g in nvidia["gpus"]] == [("RTX 3090", "8.6")]
    assert [g["gfx"] for g in profile["rocm"]["gpus"]] == ["gfx1100"]
    assert {"driver", "gpus", "platform", "rocm"} <= set(profile["overridden"])


def test_an_empty_driver_override_describes_a_machine_without_driver(tmp_path: Path) -> None:
    profile = _probe(tmp_path, "h100", TORCHSMITH_DRIVER="")
    assert profile["nvidia"] is None and "driver" in profile["overridden"]
