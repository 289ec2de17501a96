"""Mends of the assertions the held-out batch of round 24 showed wrong when it was filed, each with
its counter-case. torch's weights-only unpickler names the byte where it met an opcode it does not
implement. A byte that is no pickle opcode at all (pickletools' table) is a file that is no pickle
there (damaged, cut short, a web page or an LFS pointer saved as the checkpoint): no weights_only
setting loads it, so the 2.6 default is not stated as the cause. A real opcode the unpickler lacks
still is. An index that never had the torch build asked for is not pins in conflict; uv naming a
macOS x86_64 tag for a range names the interpreter's platform."""

from __future__ import annotations

from tests.explain.test_signatures import stated

# torch/serialization.py's _get_wo_message around _weights_only_unpickler's UnpicklingError (torch 2.6)
_MESSAGE = ("_pickle.UnpicklingError: Weights only load failed. In PyTorch 2.6, we changed the default "
            "value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running "
            "`torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
            "arbitrary code execution. Do it only if you got the file from a trusted source.\n"
            "Please file an issue with the following so that we can make `weights_only=True` compatible "
            "with your use case: WeightsUnpickler error: {detail}\n")


def test_a_byte_that_is_no_pickle_opcode_is_not_the_default_s_doing() -> None:
    for byte in (60, 118, 10):  # '<' of an HTML page, 'v' of an LFS pointer's "version", a newline
        assert "torch-load-weights-only-default" not in stated(
            _MESSAGE.format(detail=f"Unsupported operand {byte}"))


def test_an_opcode_the_unpickler_lacks_or_a_global_it_refuses_is() -> None:
    # 105 is INST (protocol 0's object creation): a real pickle that weights_only refuses
    assert "torch-load-weights-only-default" in stated(_MESSAGE.format(detail="Unsupported operand 105"))
    refused = "Unsupported global: GLOBAL argparse.Namespace was not an allowed global by default."
    assert "torch-load-weights-only-default" in stated(_MESSAGE.format(detail=refused))
    assert "torch-load-weights-only-default" in stated(_MESSAGE.format(detail="something else"))


# uv's derivation (pubgrub's report as uv words it): a variant index's newest build below the range asked
_UV_ONLY = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because only torch<=2.6.0+cu124 is available and myapp==1.0 depends on torch>=2.7.0,\n"
            "      we can conclude that myapp==1.0 cannot be used.\n"
            "      And because you require myapp==1.0, we can conclude that your requirements are\n"
            "      unsatisfiable.\n")


def test_an_index_without_the_torch_asked_for_is_not_pins_in_conflict() -> None:
    # PyTorch published no cu124 build of torch 2.7: the cu124 index stops at 2.6.0
    assert stated(_UV_ONLY) == ["torch-cuda-build-not-published"]
    # two requirements that exclude each other still are
    pins = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because torchvision==0.20.1 depends on torch==2.5.1 and you require torch==2.6.0, we can\n"
            "      conclude that you require torchvision!=0.20.1.\n")
    assert "torch-pin-conflict" in stated(pins)


def test_uv_naming_a_macos_x86_64_tag_for_any_range_is_that_python_s_platform() -> None:
    # uv's report for a range (not only ==): the tag it names is the interpreter's
    text = ("  ╰─▶ Because only torch<=2.7.1 is available and torch>=2.7.0 has no wheels with a matching "
            "platform tag (e.g., `macosx_14_0_x86_64`), we can conclude that torch>=2.7.0 cannot be used.\n")
    assert stated(text) == ["macos-x86-64-python"]
    # another platform's tag stays uv's general refusal
    other = text.replace("macosx_14_0_x86_64", "manylinux_2_17_i686")
    assert stated(other) == ["uv-no-matching-wheel"]
