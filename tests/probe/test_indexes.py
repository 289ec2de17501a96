"""Index settings from pip, uv and conda configuration files."""

from __future__ import annotations

from torchsmith.host.live import LiveHost
from torchsmith.host.recorded import RecordedHost
from torchsmith.probe.indexes import (
    config_files,
    detect_index_settings,
    parse_condarc,
    parse_pip_config,
    parse_uv_config,
)

PIP_CONF = """\
[global]
index-url = https://alice:s3cret@mirror.example/simple
extra-index-url =
    https://download.pytorch.org/whl/cu126
    file:///opt/pypi/simple
timeout = 60

[install]
constraint = /etc/constraints.txt
"""

UV_TOML = """\
index-url = "https://mirror.example/simple"

[pip]
torch-backend = "auto"

[[index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
"""

CONDARC = """\
channels:
  - conda-forge
  - nodefaults
channel_priority: strict
# comment
auto_activate_base: false
"""


def test_pip_config_keys_and_multiline_values() -> None:
    assert parse_pip_config(PIP_CONF) == [
        ("global", "index-url", "https://alice:s3cret@mirror.example/simple"),
        ("global", "extra-index-url", "https://download.pytorch.org/whl/cu126 file:///opt/pypi/simple"),
        ("install", "constraint", "/etc/constraints.txt"),
    ]


def test_broken_pip_config_is_ignored() -> None:
    assert parse_pip_config("index-url = no section header\n[[[") == []


def test_uv_config_index_settings() -> None:
    assert parse_uv_config(UV_TOML) == [
        ("index-url", "https://mirror.example/simple"),
        ("pip.torch-backend", "auto"),
        ("index.url", "https://download.pytorch.org/whl/cu126"),
    ]


def test_condarc_channels() -> None:
    assert parse_condarc(CONDARC) == [("channels", "conda-forge, nodefaults"),
                                      ("channel_priority", "strict")]
    assert parse_condarc("channels: [conda-forge]\n") == [("channels", "conda-forge")]
    assert parse_condarc(":::\n- - -\n") == []


def _host(files: dict) -> RecordedHost:  # type: ignore[type-arg]
    platform = LiveHost().platform().to_json()
    platform.update(system="Linux", python_prefix="/venv")
    return RecordedHost({"schema": 1, "platform": platform, "files": files,
                         "environ": {"HOME": "/home/u", "CONDA_PREFIX": "/opt/env"}})


def test_settings_name_their_file_and_hide_credentials() -> None:
    host = _host({"/etc/xdg/pip/pip.conf": PIP_CONF, "/home/u/.config/uv/uv.toml": UV_TOML,
                  "/opt/env/.condarc": CONDARC})
    settings = detect_index_settings(host, host.platform())
    assert settings["pip /etc/xdg/pip/pip.conf [global] index-url"] == "https://***@mirror.example/simple"
    assert settings["uv /home/u/.config/uv/uv.toml index.url"] == "https://download.pytorch.org/whl/cu126"
    assert settings["conda /opt/env/.condarc channels"] == "conda-forge, nodefaults"
    assert not any("s3cret" in value for value in settings.values())


def test_the_files_each_tool_reads() -> None:
    host = _host({})
    files = config_files(host, host.platform())
    assert files["pip"][0] == "/etc/xdg/pip/pip.conf"
    assert "/venv/pip.conf" in files["pip"] and "/home/u/.config/pip/pip.conf" in files["pip"]
    assert "/home/u/.config/uv/uv.toml" in files["uv"]
    assert "/opt/env/.condarc" in files["conda"]
    assert detect_index_settings(host, host.platform()) == {}


def test_a_toolkit_without_version_files_is_read_from_cuda_h() -> None:
    from torchsmith.probe.system import toolkit_version

    header = "/*\n * Copyright\n */\n#define CUDA_VERSION 12080\n#define CUDA_API_PER_THREAD 1\n"
    host = _host({"/opt/cuda/include/cuda.h": header})
    assert toolkit_version(host, "/opt/cuda") == ("12.8", "include/cuda.h")
    assert toolkit_version(_host({}), "/usr/local/cuda-11.8") == ("11.8", "directory name")
    assert toolkit_version(_host({}), "/usr/local/cuda") == (None, "")
