"""Counter-cases from the review of asserting signatures (issue 21): for each mended one, a text written
here in which another cause prints the same message, beside the case the signature was written for."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import Report, explain_report


def explain_text(text: str) -> Report:
    return explain_report(text, CATALOG, kb=KB)

_CUDA_CONFLICT = ("Encountered problems while solving:\n"
                  "  - constraint __cuda >=12.4 conflicting with __cuda-11.8\n")


def test_conda_cuda_below_the_requirement_is_the_drivers_only_where_no_override_set_it() -> None:
    # the case it was written for: conda read __cuda 11.8 from the driver
    assert stated("$ mamba install -c pytorch -c nvidia pytorch pytorch-cuda=12.4\n" + _CUDA_CONFLICT) == [
        "conda-cuda-driver-too-old"]
    # CONDA_OVERRIDE_CUDA=11.8 set it (docs.conda.io, manage-virtual): the driver decided nothing
    overridden = ("$ export CONDA_OVERRIDE_CUDA=11.8\n"
                  "$ mamba install -c pytorch -c nvidia pytorch pytorch-cuda=12.4\n" + _CUDA_CONFLICT)
    assert "conda-cuda-driver-too-old" not in stated(overridden)
    evidence = "the text sets CONDA_OVERRIDE_CUDA=11.8: conda's __cuda 11.8 is the override's"
    assert ("conda-cuda-driver-too-old", evidence) in explain_text(overridden).contradicted
    # an override of another value (the workaround the user tried) is not the __cuda the message shows
    assert stated("CONDA_OVERRIDE_CUDA=12.4 worked on the login node; before that:\n" + _CUDA_CONFLICT) == [
        "conda-cuda-driver-too-old"]


_CUDA_MISSING = ("Could not solve for environment specs\n"
                 "The following package could not be installed\n"
                 "\u2514\u2500 pytorch-gpu is not installable because it requires\n"
                 "   \u2514\u2500 __cuda, which is missing on the system.\n")


def test_no_cuda_virtual_package_is_no_driver_seen_only_where_no_override_emptied_it() -> None:
    assert stated("RUN mamba install -y -c conda-forge pytorch-gpu\n" + _CUDA_MISSING) == [
        "conda-cuda-virtual-package"]
    # CONDA_OVERRIDE_CUDA="" tells conda there is no CUDA, whatever the driver
    emptied = 'ENV CONDA_OVERRIDE_CUDA=""\nRUN mamba install -y -c conda-forge pytorch-gpu\n' + _CUDA_MISSING
    assert "conda-cuda-virtual-package" not in stated(emptied)
    # a version set (the usual workaround on a machine without a GPU) leaves the stated cause
    assert stated('ENV CONDA_OVERRIDE_CUDA="12.0"\n' + _CUDA_MISSING) == ["conda-cuda-virtual-package"]


def test_mmcv_compiled_from_source_names_the_missing_wheel_page_beside_an_unpublished_pair() -> None:
    built = ("$ pip install mmcv-full==1.7.1\nCollecting mmcv-full==1.7.1\n"
             "  Downloading mmcv-full-1.7.1.tar.gz (605 kB)\n"
             "Building wheels for collected packages: mmcv-full\n")
    found = explain_text(built)
    assert [e.signature.id for e in found.explanations][:1] == ["mmcv-source-build"]
    # PyPI holds mmcv's and mmcv-full's source only: without OpenMMLab's -f page pip always compiles it
    cause = found.explanations[0].cause
    assert "source only" in cause and "-f https://download.openmmlab.com/mmcv/dist/" in cause


_NOT_FOUND_2_9 = ("PackagesNotFoundError: The following packages are not available from current channels:\n\n"
                  "  - pytorch=2.9.0\n\nCurrent channels:\n\n"
                  "  - https://conda.anaconda.org/{0}/linux-64\n  - https://conda.anaconda.org/{0}/noarch\n")


def test_a_pytorch_release_missing_is_the_pytorch_channels_end_only_where_that_channel_was_searched() -> None:
    # the case it was written for: the pytorch channel, which stopped at 2.5.1, was searched
    assert stated("$ conda install pytorch=2.9.0 -c pytorch\n" + _NOT_FOUND_2_9.format("pytorch")) == [
        "conda-pytorch-channel-ended"]
    # conda's "Current channels:" (conda/exceptions.py) lists conda-forge alone: the pytorch channel was
    # never read, so its end is not why 2.9.0 was missing
    forge = explain_text("$ conda install pytorch=2.9.0 -c conda-forge\n"
                         + _NOT_FOUND_2_9.format("conda-forge"))
    assert "conda-pytorch-channel-ended" not in [e.signature.id for e in forge.explanations]
    assert any(sig == "conda-pytorch-channel-ended" and "conda-forge" in why
               for sig, why in forge.contradicted)


_KEY_REJECTED = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"


def test_a_rejected_module_key_is_secure_boots_doing_only_where_secure_boot_is_not_shown_off() -> None:
    assert stated("$ sudo modprobe nvidia\n" + _KEY_REJECTED) == ["secure-boot-blocks-nvidia-module"]
    assert stated("$ mokutil --sb-state\nSecureBoot enabled\n$ sudo modprobe nvidia\n" + _KEY_REJECTED) == [
        "secure-boot-blocks-nvidia-module"]
    # mokutil says Secure Boot is off: the kernel enforces signatures for another reason its
    # module-signing docs name (CONFIG_MODULE_SIG_FORCE, module.sig_enforce=1, a signature mismatch)
    off = ("$ mokutil --sb-state\nSecureBoot disabled\n$ cat /proc/cmdline\n"
           "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/sda2 ro module.sig_enforce=1\n"
           "$ sudo modprobe nvidia\n" + _KEY_REJECTED)
    assert "secure-boot-blocks-nvidia-module" not in stated(off)
    # prose saying so is the user's belief, not mokutil's reading
    assert stated("I have SecureBoot disabled in my BIOS, I think.\n" + _KEY_REJECTED) == [
        "secure-boot-blocks-nvidia-module"]


def test_a_full_paging_file_names_a_model_being_loaded_as_well_as_torchs_dlls() -> None:
    # the case it was written for: a DataLoader worker loading torch's CUDA DLLs
    workers = explain_text('OSError: [WinError 1455] The paging file is too small for this operation to '
                           'complete. Error loading "C:\\env\\lib\\site-packages\\torch\\lib\\'
                           'cudnn_cnn_infer64_8.dll" or one of its dependencies.\n')
    assert [e.signature.id for e in workers.explanations] == ["windows-paging-file-too-small"]
    assert "cudnn_cnn_infer64_8.dll" in workers.explanations[0].cause
    # Rust's wording while a UI loads a model (Acly/krita-ai-diffusion#1898: not enough memory for the
    # model): no DLL is loading, and the cause names the model's own commit
    model = explain_text("Server execution error: The paging file is too small for this operation to "
                         "complete. (os error 1455)\n")
    assert [e.signature.id for e in model.explanations] == ["windows-paging-file-too-small"]
    assert "a large model loaded into memory" in model.explanations[0].cause


def test_gcc_11s_functional_header_failing_under_nvcc_is_not_said_to_be_a_refused_gcc() -> None:
    refused = explain_text("/usr/local/cuda-11.3/include/crt/host_config.h:139:2: error: #error -- "
                           "unsupported GNU version! gcc versions later than 10 are not supported!\n")
    assert [e.signature.id for e in refused.explanations] == ["unsupported-gcc"]
    assert "gcc 10 at most" in refused.explanations[0].cause
    # CUDA 11.5 accepts GCC 11 (its host_config.h; buildreqs.json cuda_max_gcc) and still fails on GCC 11's
    # <functional> (brucefan1983/GPUMD#738): nvcc did not refuse the compiler, its front end failed
    parsed = explain_text("/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not "
                          "expanded with '...':\n")
    assert [e.signature.id for e in parsed.explanations] == ["unsupported-gcc"]
    assert "cannot parse that header even where it accepts GCC 11" in parsed.explanations[0].cause
