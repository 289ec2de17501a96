"""No credential leaves torchsmith: secrets planted in every place they can come from, and every
stream and file torchsmith writes searched for them.

Each secret is distinct, so a leak names its source. The places: pip.conf, PIP_INDEX_URL,
PIP_EXTRA_INDEX_URL, UV_INDEX_URL, UV_EXTRA_INDEX_URL, uv.toml, netrc, ``--torch-index``,
TORCHSMITH_TORCH_INDEX. The outputs: stdout and stderr (text and ``--json``) of probe, plan in
every render format, install --dry-run, doctor, kb refresh's error; the files of
``probe --record``; a lock, an environment export and a guard file.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from torchsmith.cli import main
from torchsmith.install.export import write_export
from torchsmith.install.guard import write_guard_file
from torchsmith.install.lock import Lock, LockedPackage, read_lock
from torchsmith.install.target import Target
from torchsmith.redact import MASK, redact, redact_data, split_credentials
from torchsmith.render import available_formats

SECRETS = {
    "pip.conf": "PipConfS3cret",
    "PIP_INDEX_URL": "PipEnvS3cret",
    "PIP_EXTRA_INDEX_URL": "xTokA9b8c7d6e5f4g3h2",  # a query token
    "UV_INDEX_URL": "UvIdxS3cret",
    "UV_EXTRA_INDEX_URL": "UvPath7k3nQw9e8r7t6y5",  # a token as a path segment
    "uv.toml": "UvToml5ecret",
    "netrc": "NetrcS3cret",
    "--torch-index": "TorchIdxS3cret",
    "TORCHSMITH_TORCH_INDEX": "TsEnvTok9a8b7c6d5e4f3",
}
GPU = ["--gpu", "8.6", "--driver", "570.86.10"]


def _assert_clean(where: str, text: str) -> None:
    leaked = [source for source, secret in SECRETS.items() if secret in text]
    assert not leaked, f"{where} leaks the secret of {', '.join(leaked)}"


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    (home / ".config" / "uv").mkdir(parents=True)
    pip_conf = tmp_path / "pip.conf"
    pip_conf.write_text(f"[global]\nindex-url = https://carol:{SECRETS['pip.conf']}@pip.example/simple\n"
                        "constraint = /tmp/none.txt\n")
    # An "@" inside the password: the authority ends at its last "@".
    (home / ".config" / "uv" / "uv.toml").write_text(
        f'index-url = "https://dave:p@{SECRETS["uv.toml"]}@uv.example/simple"\n')
    (home / ".netrc").write_text(f"machine pip.example login erin password {SECRETS['netrc']}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(pip_conf))
    monkeypatch.setenv("PIP_INDEX_URL", f"https://alice:{SECRETS['PIP_INDEX_URL']}@mirror.example/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL",
                       f"https://extra.example/simple?token={SECRETS['PIP_EXTRA_INDEX_URL']}")
    monkeypatch.setenv("UV_INDEX_URL", f"https://__token__:{SECRETS['UV_INDEX_URL']}@uv.example/simple")
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", f"https://pypi.fury.io/{SECRETS['UV_EXTRA_INDEX_URL']}/me/")
    monkeypatch.setenv("TORCHSMITH_TORCH_INDEX",
                       f"https://torch.example/whl?access_token={SECRETS['TORCHSMITH_TORCH_INDEX']}")
    yield tmp_path


def _run(args: List[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(args)
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_no_stream_carries_a_secret(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch_index = f"https://bob:{SECRETS['--torch-index']}@torch.example/whl"
    runs: Dict[str, List[str]] = {
        "probe": ["probe"], "probe --json": ["probe", "--json"],
        "probe --record": ["probe", "--record", str(planted / "record")],
        "plan": ["plan", *GPU, "--torch-index", torch_index],
        "plan --json": ["plan", "--json", *GPU, "--torch-index", torch_index],
        "plan with TORCHSMITH_TORCH_INDEX": ["plan", "--json", *GPU],
        "install --dry-run": ["install", "--dry-run", "--json", *GPU, "--torch-index", torch_index],
        "summary": ["summary", *GPU],
    }
    for fmt in available_formats():
        runs[f"plan --format {fmt}"] = ["plan", "--format", fmt, *GPU, "--torch-index", torch_index]
        runs[f"plan --format {fmt} --out"] = ["plan", "--format", fmt, *GPU, "--torch-index", torch_index,
                                              "--out", str(planted / "out" / fmt)]
    outputs = {name: _run(args, capsys) for name, args in runs.items()}
    written = sorted(p for p in (planted / "out").rglob("*") if p.is_file())
    assert len(written) >= len(available_formats())
    assert any("torch.example" in p.read_text() for p in written)  # named, without its secret
    for path in written:
        _assert_clean(str(path), path.read_text())
    assert "torch.example" in outputs["plan --json"]  # the index is named, without its secret
    for name, text in outputs.items():
        _assert_clean(name, text)
    recorded = sorted((planted / "record").iterdir())
    assert [p.name for p in recorded] == ["capture.json", "profile.json"]
    capture = (planted / "record" / "capture.json").read_text()
    assert "pip.example" in capture and "uv.example" in capture  # what was read is there, masked
    for path in recorded:
        _assert_clean(str(path), path.read_text())


# Tokens that carry no telling name, recognised by their shape: each planted in pip.conf or uv.toml.
SHAPED_SECRETS = {
    "a JWT as a path segment": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaSJ9.dozjgNryP4J3jVmNHl0w5N",
    "a UUID path token": "5f0c6a1e-3b2d-4c8a-9e7f-0a1b2c3d4e5f",
    "a 15-character path token": "a8Kf93jdL0x2QpZ",
    "?jwt=": "jwtValueQ7w8e9",
    "?session=": "sessValue4r5t6y",
    "a lowercase 40-hex path token": "3f9a0c7be21d4a5e6f7a8b9c0d1e2f3a4b5c6d7e",
}


def test_tokens_are_masked_by_their_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    s = SHAPED_SECRETS
    pip_conf = tmp_path / "pip.conf"
    pip_conf.write_text("[global]\nindex-url = https://one.example/" + s["a JWT as a path segment"]
                        + "/simple\n"
                        "extra-index-url =\n    https://two.example/" + s["a UUID path token"] + "/simple/\n"
                        "    https://three.example/simple?jwt=" + s["?jwt="] + "\n")
    (tmp_path / "uv.toml").write_text(
        '[[index]]\nname = "a"\nurl = "https://four.example/' + s["a 15-character path token"]
        + '/simple"\n'
        '[[index]]\nname = "b"\nurl = "https://five.example/simple?session=' + s["?session="] + '"\n'
        '[[index]]\nname = "c"\nurl = "https://six.example/' + s["a lowercase 40-hex path token"]
        + '/simple"\n')
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(pip_conf))
    monkeypatch.setenv("UV_CONFIG_FILE", str(tmp_path / "uv.toml"))
    runs = (["probe"], ["probe", "--json"], ["summary", *GPU], ["probe", "--record", str(tmp_path / "rec")])
    outputs = {" ".join(args): _run(args, capsys) for args in runs}
    outputs.update({str(p): p.read_text() for p in (tmp_path / "rec").iterdir()})
    # Named, the token alone masked (the temporary path's "tokens" does not hide the whole value).
    assert "one.example" in outputs["probe --json"]
    assert "six.example" in outputs["probe --json"]
    for where, text in outputs.items():
        leaked = [shape for shape, secret in s.items() if secret in text]
        assert not leaked, f"{where} shows {', '.join(leaked)}"


def test_kb_refresh_errors_carry_no_secret(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        text = _run(["kb", "refresh", "--torch-index",
                     f"http://bob:{SECRETS['--torch-index']}@127.0.0.1:{port}/whl", "--variant", "cpu",
                     "--timeout", "5"], capsys)
    assert "error[kb-refresh-failed]" in text and f"127.0.0.1:{port}" in text
    _assert_clean("kb refresh", text)


def test_install_files_carry_no_secret(tmp_path: Path) -> None:
    index = f"https://bob:{SECRETS['--torch-index']}@torch.example/whl/cu126"
    links = f"https://links.example/{SECRETS['UV_EXTRA_INDEX_URL']}/index.html"
    lock = Lock(packages=[
        LockedPackage("torch", "2.6.0+cu126", index, hashes=("sha256:" + "a" * 64,)),
        LockedPackage("mmcv", "2.2.0", None, links, hashes=("sha256:" + "b" * 64,)),
    ], variant="cu126", accelerator="cuda")
    prefix = tmp_path / "env"
    prefix.mkdir()
    lock.write(str(prefix / "torchsmith.lock.json"))
    export = write_export(Target(str(prefix / "bin" / "python"), str(prefix), "conda", "3.11.7"), lock)
    guard = write_guard_file(str(prefix), {"torch": "2.6.0+cu126"}, f"from {index}")
    for path in (prefix / "torchsmith.lock.json", Path(export), Path(guard)):
        _assert_clean(str(path), path.read_text())
    # The lock still names a usable index: reproducing it with the credentialed mirror adds them back.
    stored = read_lock(str(prefix / "torchsmith.lock.json"))
    assert stored.packages[1].index == "https://torch.example/whl/cu126"
    groups = stored.groups(torch_index_base=f"https://bob:{SECRETS['--torch-index']}@torch.example/whl")
    assert groups[0].index_url == index
    assert "--index-url https://torch.example/whl/cu126" in Path(export).read_text()


@pytest.mark.parametrize(("text", "expected"), [
    ("https://alice:p@ss@host/simple", "https://***@host/simple"),
    # The shell's working directory is no password; a pwd setting is.
    ('echo "no lock in $PWD: copy it"', 'echo "no lock in $PWD: copy it"'),
    ("PWD=/home/alice", "PWD=/home/alice"),
    ("Server=db;Uid=alice;pwd=hunter2", "Server=db;Uid=alice;pwd=***"),
    ("https://host/simple?token=abc&x=1", "https://host/simple?token=***&x=1"),
    ("https://host/s?access_token=abc", "https://host/s?access_token=***"),
    ("https://host/s?key=abc", "https://host/s?key=***"),
    ("https://pypi.fury.io/AbCd3fGh1jKlMn0pQr/me/", "https://pypi.fury.io/***/me/"),
    ("https://h/t/0123456789abcdef0123456789abcdef/simple/", "https://h/t/***/simple/"),
    ("machine h login bob password hunter2", "machine h login bob password ***"),
    ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
    # What must stay: package names, versions, wheel files, plain indexes.
    ("https://download.pytorch.org/whl/cu126", "https://download.pytorch.org/whl/cu126"),
    ("nvidia-cuda-runtime-cu12==12.6.77 torch-2.6.0+cu126-cp311-cp311-linux_x86_64.whl",
     "nvidia-cuda-runtime-cu12==12.6.77 torch-2.6.0+cu126-cp311-cp311-linux_x86_64.whl"),
    ("https://h/simple/nvidia-cudnn-cu12/", "https://h/simple/nvidia-cudnn-cu12/"),
    ("https://github.com/pytorch/pytorch/blob/00c7a380b8369d08e02dd400aa76dc6c0738b589/RELEASE.md",
     "https://github.com/pytorch/pytorch/blob/00c7a380b8369d08e02dd400aa76dc6c0738b589/RELEASE.md"),
    # A citation keeps its commit and the bracket or parenthesis that closes it.
    ("[src](https://github.com/pytorch/builder/tree/3f9a0c7be21d4a5e6f7a8b9c0d1e2f3a4b5c6d7e)]",
     "[src](https://github.com/pytorch/builder/tree/3f9a0c7be21d4a5e6f7a8b9c0d1e2f3a4b5c6d7e)]"),
    ("https://files.example/packages/4a/5b/" + "c" * 60 + "/torch-2.6.0-cp311-none-any.whl",
     "https://files.example/packages/4a/5b/" + "c" * 60 + "/torch-2.6.0-cp311-none-any.whl"),
    ("https://h/whl/rocm6.2.4/ https://h/simple/manylinux2014-wheels/",
     "https://h/whl/rocm6.2.4/ https://h/simple/manylinux2014-wheels/"),
    # A path is no assignment: only the credential goes.
    ("--python /etc/passwd: not found", "--python /etc/passwd: not found"),
    ("global.password='hunter2'", "global.password='***'"),
    ("https://h/simple?session=abc&jwt=x.y.z", "https://h/simple?session=***&jwt=***"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2ln in a log", "Bearer *** in a log"),
    # A citation keeps its commit and its closing bracket; a secret before the bracket still goes.
    ("[source: https://github.com/pytorch/builder/tree/0b54a2374c385861828b1501f2696924abd53547]",
     "[source: https://github.com/pytorch/builder/tree/0b54a2374c385861828b1501f2696924abd53547]"),
    ("(see https://h/t/0123456789abcdef0123456789abcdef).", "(see https://h/t/***)."),
    ("[source: https://h/s?token=abc]", "[source: https://h/s?token=***]"),
    ("http://[::1]:8080/simple", "http://[::1]:8080/simple"),
    ("https://en.wikipedia.org/wiki/CUDA_(disambiguation)", "https://en.wikipedia.org/wiki/CUDA_(disambiguation)"),
])
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_secret_names_are_masked_whole_and_package_names_are_not() -> None:
    data = {"HF_TOKEN": "abc", "UV_INDEX_PRIVATE_PASSWORD": "x", "pins": {"tokenizers": "0.21.0"},
            "author": "me"}
    assert redact_data(data) == {"HF_TOKEN": "***", "UV_INDEX_PRIVATE_PASSWORD": "***",
                                 "pins": {"tokenizers": "0.21.0"}, "author": "me"}


def test_split_credentials_takes_the_last_at() -> None:
    assert split_credentials("https://a:b@c@h/x") == ("https://h/x", "a:b@c")
    assert split_credentials("https://h/x") == ("https://h/x", "")
    assert json.loads(json.dumps(redact("x"))) == "x"


@pytest.mark.slow
def test_a_real_install_with_a_credentialed_torch_index_writes_no_secret(
        package_index: Any, installer_env: Dict[str, str], tmp_path: Path) -> None:
    """uv sends the credentials to the (local) index; the lock names it without them, and
    reproducing the lock with the credentialed mirror puts them back."""
    env = dict(installer_env)
    env["PIP_INDEX_URL"] = env["UV_INDEX_URL"] = package_index.index_url("pypi")
    secret = SECRETS["--torch-index"]
    mirror = package_index.url.replace("http://", f"http://bob:{secret}@") + "/pytorch"
    venv = tmp_path / "venv"
    argv = [sys.executable, "-m", "torchsmith", "install", "--yes", "--installer", "uv",
            "--torch-index", mirror, "--no-gpu", "--venv", str(venv), "torch==2.6.0"]
    for extra in ([], ["--json"]):
        proc = subprocess.run([*argv[:4], *extra, *argv[4:]], env=env, capture_output=True, text=True,
                              timeout=240, check=False)
        assert proc.returncode == 0, proc.stderr
        _assert_clean("install", proc.stdout + proc.stderr)
        for name in ("torchsmith.lock.json", "torchsmith-guard.txt"):
            _assert_clean(name, (venv / name).read_text())
    lock = json.loads((venv / "torchsmith.lock.json").read_text())
    torch = next(p for p in lock["packages"] if p["name"] == "torch")
    assert torch["index"] == package_index.url + "/pytorch/cpu"
    again = subprocess.run([sys.executable, "-m", "torchsmith", "install", "--yes", "--json",
                            "--torch-index", mirror, "--lock", str(venv / "torchsmith.lock.json"),
                            "--venv", str(tmp_path / "again")],
                           env=env, capture_output=True, text=True, timeout=240, check=False)
    assert again.returncode == 0, again.stderr
    _assert_clean("install --lock", again.stdout + again.stderr)


def test_no_render_is_masked_when_nothing_is_secret(capsys: pytest.CaptureFixture[str]) -> None:
    # Redaction must not eat ordinary words: a mask in a file with no secret is a broken file.
    for fmt in [*available_formats(), "slurm-ddp"]:
        machine = (["--jetson", "35.2.1", "--python", "3.8"] if fmt == "jetson" else
                   ["--gpu", "8.6", "--driver", "550.54.14", "--python", "3.11",
                    "--platform", "linux-x86_64"])
        main(["plan", "--format", fmt, *machine])
        out = capsys.readouterr().out
        assert out.strip() and MASK not in out, (fmt, [line for line in out.splitlines() if MASK in line])
