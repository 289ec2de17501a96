"""Wordings people give of two tool messages: an expired certificate named in prose (the family,
which asserts none of its candidates), and Windows' sharing-violation text without its error code."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_an_expired_certificate_in_prose_is_the_family() -> None:
    # pytorch/pytorch#150491
    text = ("I visited the wheel site and discovered that the site's RSA security certificate Expired: "
            "Tuesday, April 1, 2025")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "index-certificate-expired" and found.candidates
    assert stated("The certificate has expired.") == ["index-certificate-expired"]
    # a certificate that is valid, or a word that only contains the letters, is none
    assert stated("The certificate is valid until 2026; my trial expired.") == []
    assert stated("certificates expired_at: null") == []


def test_windows_sharing_violation_without_its_code() -> None:
    # pytorch/pytorch#156413
    text = 'it keeps saying "another program is using this file, the process cannot access it"'
    assert stated(text) == ["windows-file-locked"]
    assert stated("no other program is using the file") == []



def test_reloading_nvidia_uvm_said_to_fix_it_before_the_commands() -> None:
    # ultralytics/ultralytics#7716: the statement first, the reload sequence after it
    text = ("these commands also solve my problem instead of rebooting, how can i solve it ?\nthe error "
            "happen if i suspend my device\n\nsudo systemctl restart nvidia-persistenced.service\n"
            "sudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n")
    assert stated(text) == ["nvidia-uvm-not-loaded"]
    assert stated("I solved it with:\nsudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n") == [
        "nvidia-uvm-not-loaded"]
    # a question, a negation, or the commands without their reload sequence
    for other in ("How can I solve my problem?\nsudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n",
                  "It has not fixed it:\nsudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n",
                  "This solved it:\nsudo modprobe nvidia_uvm\n"):
        assert "nvidia-uvm-not-loaded" not in stated(other), other


def test_mig_in_use_and_one_device_seen_is_mig_enumeration() -> None:
    # pytorch/pytorch#102715
    text = ("Hi, I have an a100 machine and the configuration for MIG is following.\n\n"
            "and `torch.cuda.device_count()` shows only one gpu. How could I solve it?\n")
    assert stated(text) == ["mig-single-instance"]
    assert stated("MIG is enabled with 7 instances, but the process sees only one GPU.") == [
        "mig-single-instance"]
    # MIG disabled, nvidia-smi's MIG column header, or no single device said
    for other in ("MIG mode is disabled. torch.cuda.device_count() returns 1",
                  "| GPU  Name  | MIG M. |\ntorch.cuda.device_count() returns 1",
                  "MIG 3g.40gb instances: device_count() returns 2",
                  "With MIG, does device_count() return 1?"):
        assert "mig-single-instance" not in stated(other), other


def test_one_check_two_interpreters_two_answers_is_two_pythons() -> None:
    # kcosta42/VQGAN-CLIP-Docker#6 (the corpus sample), and Windows paths
    text = ('python3 -c "import torch; print(torch.cuda.is_available())"\nFalse\n'
            'python -c "import torch; print(torch.cuda.is_available())"\nTrue\n')
    assert stated(text) == ["different-python-interpreter"]
    paths = ('C:\\venv\\Scripts\\python.exe -c "import torch; print(torch.cuda.is_available())" -> True\n'
             'py -c "import torch; print(torch.cuda.is_available())" -> False\n')
    assert stated(paths) == ["different-python-interpreter"]
    # one interpreter (a before and an after), two checks, or one answer only
    for other in (text.replace("python3 -c", "python -c"),
                  text.replace("available())\"\nTrue", "available(0))\"\nTrue"),
                  text.replace("False", "True")):
        assert "different-python-interpreter" not in stated(other), other



def test_two_interpreters_that_give_the_same_answer_are_not_two_pythons_shown() -> None:
    # each run's own answer counts, not a True anywhere else in the text
    both_false = ('$ python -c "import torch; print(torch.cuda.is_available())"\nFalse\n'
                  '$ python3 -c "import torch; print(torch.cuda.is_available())"\nFalse\n'
                  "torch.backends.cudnn.benchmark = True\n")
    assert "different-python-interpreter" not in stated(both_false)
    # the answer said in words before one run and after the other (the corpus sample's shape)
    said = ('I keep getting FALSE for\n\npython3 -c "import torch; print(torch.cuda.is_available());"\n\n'
            'but\n\npython -c "import torch; print(torch.cuda.is_available());"\n\nresults in TRUE\n')
    assert stated(said) == ["different-python-interpreter"]
