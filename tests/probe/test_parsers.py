"""The pure parsers of each probe, on verbatim texts and on garbage."""

from __future__ import annotations

import json
from typing import Dict, List, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchsmith.host import CommandResult, PlatformInfo
from torchsmith.machine import ProbeNote
from torchsmith.probe.apple import macos_at_least, parse_brand_string
from torchsmith.probe.intel import detect_intel_gpus, intel_gpu_name
from torchsmith.probe.jetson import (
    module_from_model,
    module_from_soc,
    parse_device_tree_text,
    parse_jetpack_version,
    parse_nv_tegra_release,
)
from torchsmith.probe.nvidia import parse_nvidia_smi_banner
from torchsmith.probe.rocm import (
    detect_rocm,
    parse_amd_smi_static,
    parse_hipconfig_version,
    parse_id,
    parse_rocm_agent_enumerator,
    parse_rocm_version,
    parse_rocminfo,
)


@pytest.mark.parametrize(("text", "l4t"), [
    # jetson-containers l4t_version.py comments and public board outputs
    ("# R32 (release), REVISION: 6.1, GCID: 27863751, BOARD: t210ref, EABI: aarch64, "
     "DATE: Mon Jul 26 19:20:30 UTC 2021\n", "32.6.1"),
    ("# R35 (release), REVISION: 2.1, GCID: 32398013, BOARD: t186ref, EABI: aarch64, "
     "DATE: Sun Jan 22 03:18:23 UTC 2023", "35.2.1"),
    ("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  "
     "8 01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n", "36.4.3"),
    ("# R36 (release), REVISION: 4.7, GCID: 40895960\n", "36.4.7"),
    ("# R35 (release), REVISION: 1, GCID: 1", "35.1.0"),
    ("", None),
    ("garbage \x00\xff", None),
    ("# R3X (release), REVISION: a.b", None),
])
def test_nv_tegra_release(text: str, l4t: Optional[str]) -> None:
    assert parse_nv_tegra_release(text) == l4t


@pytest.mark.parametrize(("model", "module", "cc"), [
    ("NVIDIA Jetson Nano Developer Kit", "Nano", "5.3"),
    ("NVIDIA Jetson Nano 2GB Developer Kit", "Nano", "5.3"),
    ("quill", "TX2", "6.2"),
    ("NVIDIA Jetson TX2 NX Developer Kit", "TX2", "6.2"),
    ("jetson_tx1", "TX1", "5.3"),
    ("Jetson-AGX", "AGX Xavier", "7.2"),
    ("NVIDIA Jetson Xavier NX Developer Kit", "Xavier NX", "7.2"),
    ("NVIDIA Jetson AGX Orin Developer Kit", "AGX Orin", "8.7"),
    ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit", "Orin NX", "8.7"),
    ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", "Orin Nano", "8.7"),
    ("NVIDIA Jetson AGX Thor Developer Kit", "Thor", "11.0"),
])
def test_module_from_model(model: str, module: str, cc: str) -> None:
    assert module_from_model(model) == (module, cc)


def test_unknown_carrier_board_falls_back_to_the_soc() -> None:
    compatible = parse_device_tree_text("seeed,j4012\x00nvidia,p3767-0000\x00nvidia,tegra234\x00")
    assert compatible == ["seeed,j4012", "nvidia,p3767-0000", "nvidia,tegra234"]
    assert module_from_model("reComputer J4012") is None
    assert module_from_soc(compatible) == ("Orin", "8.7")
    assert module_from_soc(["raspberrypi,5-model-b", "brcm,bcm2712"]) is None


@pytest.mark.parametrize(("text", "version"), [
    ("6.2+b77", "6.2"), ("5.1-b147", "5.1"), ("4.6.1-b110", "4.6.1"), ("", None), ("b77", None),
])
def test_jetpack_package_version(text: str, version: Optional[str]) -> None:
    assert parse_jetpack_version(text) == version


ROCMINFO = """ROCk module is loaded
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD Ryzen 9 5900X 12-Core Processor
  Marketing Name:          AMD Ryzen 9 5900X 12-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx1100
  Uuid:                    GPU-398a3f843a146602
  Marketing Name:          Radeon RX 7900 XTX
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1100
*******
Agent 3
*******
  Name:                    gfx1032
  Marketing Name:          AMD Radeon PRO W6600
  Device Type:             GPU
"""


def test_rocminfo_lists_gpu_agents_only() -> None:
    assert [(g.name, g.gfx) for g in parse_rocminfo(ROCMINFO)] == [
        ("Radeon RX 7900 XTX", "gfx1100"), ("AMD Radeon PRO W6600", "gfx1032")]
    assert parse_rocminfo("") == []
    assert parse_rocminfo(ROCMINFO[:150]) == []  # cut before the first GPU agent


def test_rocm_agent_enumerator_drops_the_cpu_agent() -> None:
    assert [g.gfx for g in parse_rocm_agent_enumerator("gfx000\ngfx90a\ngfx90a\n\n")] == ["gfx90a"] * 2
    assert parse_rocm_agent_enumerator("rocm_agent_enumerator: error\n") == []


@pytest.mark.parametrize("shape", ["list", "gpu_data"])
def test_amd_smi_static_json_both_shapes(shape: str) -> None:
    rows: List[Dict[str, object]] = [
        {"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"}},
        {"gpu": 1, "asic": {"market_name": "N/A", "target_graphics_version": "N/A"}},
        {"gpu": 2, "asic": "N/A"},
    ]
    text = json.dumps(rows if shape == "list" else {"gpu_data": rows})
    gpus = parse_amd_smi_static(text)
    assert [(g.name, g.gfx) for g in gpus] == [
        ("AMD Instinct MI300X", "gfx942"), ("N/A", None), ("AMD GPU", None)]
    assert parse_amd_smi_static("not json") == []
    assert parse_amd_smi_static('"a string"') == []


def test_rocm_versions() -> None:
    assert parse_rocm_version("6.2.4-120\n") == "6.2.4"
    assert parse_rocm_version("garbage") is None
    assert parse_hipconfig_version("6.2.41134-65d174c3e") == "6.2"
    assert parse_hipconfig_version("") is None


def test_id_output() -> None:
    assert parse_id("uid=1000(ann) gid=1000(ann) groups=1000(ann),44(video),109(render)\n") == (
        1000, ["ann", "video", "render"])
    assert parse_id("uid=0(root) gid=0(root) groups=0(root)") == (0, ["root"])
    assert parse_id("id: command failed") == (None, [])


class _Host:
    """The smallest Host for detect_* tests that need only a few answers."""

    def __init__(
        self,
        files: Optional[Dict[str, str]] = None,
        dirs: Optional[Dict[str, List[str]]] = None,
        commands: Optional[Dict[str, CommandResult]] = None,
        environ: Optional[Dict[str, str]] = None,
        system: str = "Linux",
    ) -> None:
        self.files = files or {}
        self.dirs = dirs or {}
        self.commands = commands or {}
        self.env = environ or {}
        self.system = system

    def read_text(self, path: str, limit: int = 1 << 22) -> Optional[str]:
        return self.files.get(path)

    def list_dir(self, path: str) -> Optional[List[str]]:
        return self.dirs.get(path)

    def which(self, name: str) -> Optional[str]:
        return f"/usr/bin/{name}" if name in self.commands else None

    def run(self, argv: List[str], timeout: float = 5.0) -> CommandResult:
        return self.commands.get(argv[0].rsplit("/", 1)[-1], CommandResult(list(argv), not_found=True))

    def environ(self) -> Dict[str, str]:
        return self.env

    def platform(self) -> PlatformInfo:
        return PlatformInfo(self.system, "x86_64", "6.1", "3.11.7", "CPython", "/usr/bin/python3",
                            "/usr", "/usr")


def _pci(devices: Dict[str, tuple]) -> _Host:
    files = {}
    for slot, (vendor, device, klass) in devices.items():
        base = f"/sys/bus/pci/devices/{slot}"
        files.update({f"{base}/vendor": f"0x{vendor}\n", f"{base}/device": f"0x{device}\n",
                      f"{base}/class": f"0x{klass}\n"})
    return _Host(files=files, dirs={"/sys/bus/pci/devices": sorted(devices)})


def test_intel_gpus_by_pci_vendor_and_display_class() -> None:
    # pci.ids: 8086:56a0 DG2 [Arc A770]; 8086:4680 AlderLake-S GT1; 0x0403 is audio, not display.
    host = _pci({"0000:00:02.0": ("8086", "4680", "030000"), "0000:03:00.0": ("8086", "56a0", "030000"),
                 "0000:00:1f.3": ("8086", "7ad0", "040300"), "0000:01:00.0": ("10de", "2b85", "030000")})
    gpus = detect_intel_gpus(host, [])
    assert [(g.name, g.pci_id) for g in gpus] == [("Intel GPU 8086:4680", "8086:4680"),
                                                  ("Intel Arc A770", "8086:56a0")]
    assert intel_gpu_name("0BD5") == "Intel Data Center GPU Max 1550"


def test_amd_gpu_without_rocm_is_listed_with_a_note() -> None:
    host = _pci({"0000:0b:00.0": ("1002", "744c", "030000")})
    notes: List[ProbeNote] = []
    rocm = detect_rocm(host, notes)
    assert rocm is not None and rocm.version is None
    assert [g.name for g in rocm.gpus] == ["AMD GPU 1002:744c"] and rocm.gpus[0].gfx is None
    assert "no ROCm" in notes[0].problem


def test_rocm_falls_back_from_rocminfo_to_the_agent_enumerator_and_notes_the_override() -> None:
    host = _Host(
        files={"/opt/rocm/.info/version": "6.2.4-120\n"},
        dirs={"/opt/rocm": ["bin"], "/dev": ["kfd"]},
        commands={
            "rocminfo": CommandResult(["rocminfo"], returncode=1, stderr="hsa api call failure at: "
                                      "/long_pathname/rocminfo.cc:1306\nPermission denied"),
            "rocm_agent_enumerator": CommandResult(["rocm_agent_enumerator"], returncode=0,
                                                   stdout="gfx000\ngfx1031\n"),
            "id": CommandResult(["id"], returncode=0, stdout="uid=1000(a) gid=1000(a) groups=1000(a)\n"),
        },
        environ={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
    )
    notes: List[ProbeNote] = []
    rocm = detect_rocm(host, notes)
    assert rocm is not None
    assert (rocm.version, [g.gfx for g in rocm.gpus]) == ("6.2.4", ["gfx1031"])
    assert rocm.kfd_access is False and rocm.hsa_override_gfx_version == "10.3.0"
    text = "\n".join(n.problem for n in notes)
    assert "render" in text and "gfx1030" in text and "may not open /dev/kfd" in text


def test_hsa_override_with_a_hex_stepping_and_a_bad_value() -> None:
    for value, needle in (("9.0.10", "gfx90a"), ("11", "not MAJOR.MINOR.STEPPING")):
        host = _Host(dirs={"/opt/rocm": []}, environ={"HSA_OVERRIDE_GFX_VERSION": value})
        notes: List[ProbeNote] = []
        detect_rocm(host, notes)
        assert any(needle in n.problem for n in notes)


def test_hip_sdk_on_windows_is_reported_as_unsupported_by_pytorch() -> None:
    host = _Host(environ={"HIP_PATH": "C:\\Program Files\\AMD\\ROCm\\6.1\\"}, system="Windows")
    notes: List[ProbeNote] = []
    rocm = detect_rocm(host, notes)
    assert rocm is not None and rocm.version == "6.1"
    assert "no ROCm wheels for Windows" in notes[0].problem
    assert detect_rocm(_Host(system="Windows"), []) is None


def test_brand_strings_and_macos_versions() -> None:
    assert parse_brand_string("Apple M2 Pro\n") == "Apple M2 Pro"
    assert parse_brand_string("VirtualApple @ 2.50GHz processor") is None
    assert parse_brand_string("") is None
    assert macos_at_least("12.3", (12, 3)) is True
    assert macos_at_least("12.2.1", (12, 3)) is False
    assert macos_at_least("14", (12, 3)) is True
    assert macos_at_least("x.y", (12, 3)) is None


def test_nvidia_smi_banners_old_and_r610() -> None:
    old = "| NVIDIA-SMI 570.153.02             Driver Version: 570.153.02     CUDA Version: 12.8     |"
    new = "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |"
    assert parse_nvidia_smi_banner(old) == ("570.153.02", "12.8")
    assert parse_nvidia_smi_banner(new) == ("610.43.02", "13.3")
    assert parse_nvidia_smi_banner("CUDA Version: ERR!") == (None, None)


@given(st.text(max_size=400))
def test_parsers_never_raise_on_arbitrary_text(text: str) -> None:
    parse_nv_tegra_release(text)
    parse_device_tree_text(text)
    parse_jetpack_version(text)
    parse_rocminfo(text)
    parse_rocm_agent_enumerator(text)
    parse_amd_smi_static(text)
    parse_rocm_version(text)
    parse_hipconfig_version(text)
    parse_id(text)
    parse_brand_string(text)
    parse_nvidia_smi_banner(text)
    if text:
        module_from_model(text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["gpus", "driver_version", "cuda_driver_version", "error", "index", "name",
                         "compute_capability", "memory_mib", "uuid", "bus_id", "mig_mode",
                         "version", "asic", "gpu_data"]), inner, max_size=6),
    max_leaves=12,
)


class _SnippetHost(_Host):
    def __init__(self, nvml: str, cuda: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.snippets = {"nvml_probe.py": nvml, "cuda_driver.py": cuda}

    def run(self, argv: List[str], timeout: float = 5.0) -> CommandResult:
        name = argv[-1].rsplit("/", 1)[-1]
        if name in self.snippets:
            return CommandResult(list(argv), returncode=0, stdout=self.snippets[name])
        return super().run(argv, timeout)


@given(nvml=_JSON, cuda=_JSON, smi=st.text(max_size=200), proc=st.text(max_size=80))
def test_the_nvidia_probe_survives_any_child_output(nvml: object, cuda: object, smi: str,
                                                    proc: str) -> None:
    from torchsmith.probe.nvidia import detect_nvidia

    host = _SnippetHost(
        json.dumps(nvml), json.dumps(cuda),
        files={"/proc/driver/nvidia/version": proc},
        commands={"nvidia-smi": CommandResult(["nvidia-smi"], returncode=0, stdout=smi)},
    )
    info = detect_nvidia(host, [])
    assert info is None or all(isinstance(g.index, int) for g in info.gpus)


@given(_JSON)
def test_amd_smi_parser_survives_any_json(data: object) -> None:
    parse_amd_smi_static(json.dumps(data))
