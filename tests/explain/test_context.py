"""What the knowledge base and the kind of machine change in an explanation."""

from __future__ import annotations

from pathlib import Path

from tests.explain.test_signatures import CATALOG, read_sample

from torchsmith.explain import explain
from torchsmith.kb import load_kb
from torchsmith.machine import JetsonInfo, Machine, OsInfo
from torchsmith.versions import version_tuple

KB = load_kb(packaged_only=True)

CORPUS = Path(__file__).parent / "corpus"
PUBLIC = Path(__file__).parent / "public"
DESKTOP = ("download.pytorch.org", "nvidia-smi", "Upgrade the NVIDIA driver", "Upgrade the host driver")


def one(text: str, machine: Machine = None):  # type: ignore[assignment]
    (item,) = [e for e in explain(text, CATALOG, machine, kb=KB) if e.signature.priority == 1] or explain(
        text, CATALOG, machine, kb=KB)
    return item


def test_container_fix_names_the_real_variable() -> None:
    _, text = read_sample(CORPUS / "container-cuda-requirement--1.txt")
    item = one(text)
    joined = "\n".join(item.fix)
    assert "NVIDIA_DISABLE_REQUIRE=true" in joined
    assert "NVIDIA_DISABLE_REQUIRES" not in joined


def test_a_gpu_too_old_for_every_current_release_gets_the_real_ways_out() -> None:
    _, text = read_sample(CORPUS / "gpu-too-old-for-torch--1.txt")
    item = one(text)
    # Computed from the KB's arch lists: the newest release any of whose binaries carry sm_35.
    kb = load_kb()
    carrying = [r.version for r in kb.table("releases") for v in r.variants
                for archs in v.sass_by_platform.values() if "sm_35" in archs]
    last = max(carrying, key=version_tuple)
    assert f"the last torch release whose binaries carry sm_35 is {last} (" in item.cause
    joined = "\n".join(item.fix)
    assert 'TORCH_CUDA_ARCH_LIST="3.5"' in joined and "torchsmith build-env" in joined
    assert "CUDA 11.8 is the newest toolkit" in joined  # from the KB's arch-support table
    assert "install a build that has" not in joined.lower()


def test_the_last_release_with_an_arch_comes_from_the_data() -> None:
    text = ("Found GPU0 Tesla K80 which is of cuda capability 3.7.\n"
            "PyTorch no longer supports this GPU because it is too old.\n"
            "The minimum cuda capability supported by this library is 5.0.\n")
    item = one(text)
    kb = load_kb()
    newest = max((r for r in kb.table("releases") for v in r.variants
                  if any("sm_37" in s for s in v.sass_by_platform.values())),
                 key=lambda r: tuple(int(x) for x in r.version.split(".")))
    assert f"sm_37 is {newest.version}" in item.cause


def test_the_conda_channel_end_is_cited_from_the_data() -> None:
    _, text = read_sample(CORPUS / "conda-pytorch-channel-ended--1.txt")
    item = one(text)
    last = next(c for c in load_kb().conda_channels if c.channel == "pytorch" and c.package == "pytorch")
    assert f"its last release there is {last.last_version}" in item.cause
    assert "source:" in item.kb_facts["conda_channel_last"]


def test_a_cpu_torch_under_a_cuda_extension_is_replaced_first() -> None:
    text = ("torch 2.1.0+cpu\n"
            "ImportError: /env/lib/python3.10/site-packages/ext/_C.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    item = one(text)
    assert item.signature.id == "extension-abi-mismatch"
    assert "CPU build (2.1.0+cpu)" in item.fix[0] and "--force-reinstall torch" in item.fix[0]


def test_an_unproven_undefined_symbol_gives_candidates_not_a_cause() -> None:
    _, text = read_sample(CORPUS / "undefined-symbol--1.txt")
    item = one(text)
    assert item.signature.id == "undefined-symbol"
    assert len(item.candidates) >= 2
    assert all(c.check for c in item.candidates)
    assert item.to_json()["candidates"][0].keys() == {"id", "cause", "check"}


def test_on_a_jetson_no_desktop_advice_but_nvidias_wheels() -> None:
    _, text = read_sample(CORPUS / "driver-too-old--1.txt")
    desktop = one(text)
    assert any(word in step for step in desktop.fix for word in DESKTOP)
    jetson = Machine(os=OsInfo(system="linux", arch="aarch64"),
                     jetson=JetsonInfo(l4t="35.2.1", jetpack="5.1"))
    item = one(text, jetson)
    assert not any(word in step for step in item.fix for word in DESKTOP)
    joined = "\n".join(item.fix)
    assert "JetPack 5.1 (L4T 35.2.1, Python 3.8)" in joined
    assert "developer.download.nvidia.com/compute/redist/jp/v51/" in joined


def test_a_jetson_wheel_in_the_text_is_enough() -> None:
    _, text = read_sample(PUBLIC / "wheel-not-supported--2.txt")  # torch-2.0.0+nv23.05-cp38 linux_aarch64
    item = one(text)
    joined = "\n".join(item.fix)
    assert "download.pytorch.org" not in joined
    assert "JetPack 5.1.1" in joined


def test_a_cp36_wheel_on_jetpack_5_is_not_told_to_make_a_python_36_venv() -> None:
    _, text = read_sample(PUBLIC / "wheel-not-supported--1.txt")  # torch-1.6.0-cp36 on JetPack 5.1.1
    jetson = Machine(os=OsInfo(system="linux", arch="aarch64"), jetson=JetsonInfo(l4t="35.3.1"))
    joined = "\n".join(one(text, jetson).fix)
    assert "download.pytorch.org" not in joined
    assert "ships Python 3.8: use this JetPack's wheel, not a Python 3.6 environment" in joined


def test_a_cpu_torch_under_a_missing_cuda_library_is_replaced_first() -> None:
    text = ("torch==2.0.1+cpu\n"
            "OSError: libc10_cuda.so: cannot open shared object file: No such file or directory\n")
    item = one(text)
    assert item.signature.id == "torch-library-missing"
    assert item.fix[0].startswith("The installed torch is a CPU build (2.0.1+cpu)")
    without = one(text.replace("+cpu", "+cu118"))
    assert "CPU build" not in without.fix[0]


def test_the_machine_and_the_log_add_evidence_to_an_unproven_symbol() -> None:
    from torchsmith.machine import EnvInfo

    text = ("$ echo $LD_LIBRARY_PATH\n/usr/local/nccl-2.10/lib:/usr/local/cuda-11.8/lib64\n"
            "ImportError: /env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommResume\n")
    machine = Machine(os=OsInfo(system="linux", arch="x86_64"),
                      env=EnvInfo(variables={"LD_LIBRARY_PATH": "/usr/local/nccl-2.10/lib"},
                                  nccl_libraries=("/usr/local/nccl-2.10/lib/libnccl.so.2",)))
    item = one(text, machine)
    assert item.signature.id == "undefined-symbol" and item.candidates
    logged = "/usr/local/nccl-2.10/lib:/usr/local/cuda-11.8/lib64"
    assert item.fix[0].startswith(f"The log shows LD_LIBRARY_PATH={logged}")
    assert "LD_LIBRARY_PATH=/usr/local/nccl-2.10/lib" in item.host_facts
    assert any("/usr/local/nccl-2.10/lib/libnccl.so.2" in line for line in item.host_facts)


def test_a_pinned_version_that_was_never_released_is_named_first() -> None:
    _, text = read_sample(PUBLIC / "no-matching-distribution--3.txt")  # torch==1.15.0
    item = one(text)
    assert item.fix[0].startswith("Torch 1.15.0 is not among the torch releases in torchsmith's data")
    assert "torchsmith plan" in item.fix[1]
    real = one(text.replace("1.15.0", "1.5.0"))  # a real release: no such claim
    assert not any("is not among the torch releases" in step for step in real.fix)


def test_an_arch_no_release_carries_gets_no_install_a_build_advice() -> None:
    text = ("NVIDIA GeForce GTX 680 with CUDA capability sm_30 is not compatible with the current PyTorch "
            "installation.\n")
    item = one(text)
    joined = "\n".join(item.fix)
    assert "Another torch binary will not help" in joined and "torchsmith build-env" in joined
    assert "Install a torch build whose arch list includes" not in joined
    assert "torchsmith plan" not in joined
    newer = one(text.replace("GTX 680", "RTX 5090").replace("sm_30", "sm_120"))
    assert newer.fix[0].startswith("On the machine that shows this error")
    assert any(step.startswith("The last torch release whose binaries carry sm_120 is") for step in newer.fix)
