"""Counter-cases from rv11's review of asserting signatures (issue 21): a text written here in which
another cause prints the same message, beside the case the signature was written for. Where the id
stays true for both, its cause names both (the message cannot tell them apart)."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import Report, explain_report


def explain_text(text: str) -> Report:
    return explain_report(text, CATALOG, kb=KB)


def cause_of(text: str, signature: str) -> str:
    return next(e.cause for e in explain_text(text).explanations if e.signature.id == signature)


_BOOTSTRAP = ("RuntimeError:\n"
              "        An attempt has been made to start a new process before the\n"
              "        current process has finished its bootstrapping phase.\n\n"
              "        This probably means that you are not using fork to start your\n"
              "        child processes and you have forgotten to use the proper idiom\n"
              "        in the main module:\n\n"
              "            if __name__ == '__main__':\n"
              "                freeze_support()\n")


def test_spawn_bootstrap_refusal_names_the_frozen_program_beside_the_missing_guard() -> None:
    script = ('  File "C:\\Users\\me\\train.py", line 40, in <module>\n'
              "    for batch in loader:\n" + _BOOTSTRAP)
    assert stated(script) == ["windows-spawn-main-guard"]
    # a PyInstaller build whose main lacks freeze_support() (docs.python.org, multiprocessing.freeze_support)
    frozen = ('  File "C:\\Users\\me\\AppData\\Local\\Temp\\_MEI51202\\app.py", line 12, in <module>\n'
              + _BOOTSTRAP)
    assert stated(frozen) == ["windows-spawn-main-guard"]
    cause = cause_of(frozen, "windows-spawn-main-guard")
    assert "if __name__ == '__main__':" in cause and "freeze_support()" in cause and "PyInstaller" in cause


_LIBUV = ("torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv "
          "support, run with USE_LIBUV=0 to disable it.\n")


def test_libuv_refusal_is_the_build_not_the_platform() -> None:
    windows = ('File "C:\\Python312\\Lib\\site-packages\\torch\\distributed\\rendezvous.py", line 189\n'
               + _LIBUV)
    assert stated(windows) == ["windows-libuv-missing"]
    # TCPStore.cpp checks the build's libuv backend, not the OS: a Linux torch built from source without it
    linux = ("$ python setup.py develop  # USE_DISTRIBUTED=1, no libuv found\n"
             'File "/home/me/pytorch/torch/distributed/rendezvous.py", line 189\n' + _LIBUV)
    assert stated(linux) == ["windows-libuv-missing"]
    assert "built from source without libuv" in cause_of(linux, "windows-libuv-missing")


_CONDA_THEN_PIP = ("pytorch                   2.1.0           py3.10_cuda11.8_cudnn8.7.0_0    pytorch\n"
                   "$ pip install {asked}\n"
                   "Installing collected packages: torch\n"
                   "  Attempting uninstall: torch\n"
                   "    Found existing installation: torch 2.1.0\n")


def test_pip_replacing_conda_torch_names_a_direct_request_beside_a_dependency() -> None:
    # pip logs 'Attempting uninstall' for every requirement it reinstalls, asked for or pulled in
    # (pypa/pip src/pip/_internal/req/__init__.py): the cause must not claim only the second
    for asked in ("whisperx", "torch==2.3.1"):
        text = _CONDA_THEN_PIP.format(asked=asked)
        assert "pip-replaced-conda-torch" in stated(text)
        cause = cause_of(text, "pip-replaced-conda-torch")
        assert "given on its command line" in cause and "another package's requirements" in cause


_LIB64_TRACE = ('  File "{prefix}/lib64/python3.12/site-packages/torch/__init__.py", line 290, in <module>\n'
                "    _load_global_deps()\n"
                "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n")


def test_lib64_split_is_stated_for_a_system_or_user_site_not_inside_a_venv() -> None:
    # the case it was written for: pip's system scheme on a RHEL-like OS (platlib lib64, purelib lib)
    for prefix in ("/usr/local", "/usr", "/home/ana/.local", "/opt/rh/rh-python38/root/usr"):
        assert stated(_LIB64_TRACE.format(prefix=prefix)) == ["venv-lib64-split"]
    # python -m venv links lib64 to lib (CPython Lib/venv/__init__.py): one site-packages, no split
    venv = _LIB64_TRACE.format(prefix="/home/ana/projects/app/.venv")
    assert "venv-lib64-split" not in stated(venv)
    refused = explain_text(venv).contradicted
    assert any(c[0] == "venv-lib64-split" and "a link to lib" in c[1] for c in refused)


def test_an_option_nvcc_refuses_is_too_old_only_where_a_newer_nvcc_has_it() -> None:
    # nvcc 10.1 lacks -generate-dependencies-with-compile, which torch's ninja build passes
    own = ("-gencode=arch=compute_70,code=sm_70 -std=c++14\n"
           "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'\n")
    assert stated(own) == ["nvcc-too-old"]
    # GCC's -no-pie reached nvcc unwrapped (GCC Link Options; nvcc takes host flags via -Xlinker)
    host = "nvcc -O2 -no-pie -c kernel.cu -o kernel.o\nnvcc fatal   : Unknown option '-no-pie'\n"
    assert "nvcc-too-old" not in stated(host)
    assert any(c[0] == "nvcc-too-old" and "-Xcompiler" in c[1] for c in explain_text(host).contradicted)


def test_module_missing_for_the_kernel_is_the_hosts_only_outside_an_image_build() -> None:
    host = ("$ sudo apt install nvidia-driver-550\n"
            "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
            "$ sudo modprobe nvidia\n"
            "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic\n")
    assert stated(host) == ["nvidia-module-not-built-for-kernel"]
    # the driver package's install script ran modprobe inside `docker build`: the image has no
    # /lib/modules for the host's kernel (kmod looks in the filesystem it runs in)
    image = ("#8 [4/6] RUN apt-get install -y nvidia-driver-550\n"
             "#8 41.07 Setting up nvidia-dkms-550 (550.107.02-0ubuntu1) ...\n"
             "#8 41.52 modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic\n")
    assert "nvidia-module-not-built-for-kernel" not in stated(image)
    assert any(c[0] == "nvidia-module-not-built-for-kernel" for c in explain_text(image).contradicted)


def test_a_stray_word_after_a_conda_channel_may_be_a_package_as_well_as_a_channel() -> None:
    # argparse takes positionals in one run (docs.python.org argparse, "Intermixed parsing"): a word after
    # the options is left over whether it is a channel without its -c or a package placed there
    refused = ("usage: conda-script.py [-h] [-V] command ...\n"
               "conda-script.py: error: unrecognized arguments: {word}\n")
    channel = ("$ conda install pytorch torchvision cudatoolkit=11.1 -c pytorch nvidia\n"
               + refused.format(word="nvidia"))
    assert stated(channel) == ["conda-channel-missing-c-flag"]
    package = "$ conda install pytorch -c pytorch torchvision\n" + refused.format(word="torchvision")
    assert stated(package) == ["conda-channel-missing-c-flag"]
    cause = cause_of(package, "conda-channel-missing-c-flag")
    assert "a second channel missing its -c" in cause and "a package placed after the options" in cause
