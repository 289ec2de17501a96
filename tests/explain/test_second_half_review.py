"""Counter-cases from the review of the second half of the asserting signatures (issue 21, rv10b):
for each mend, the message with another cause's evidence, beside the case it was written for."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_PIP_403 = "Could not install packages due to an EnvironmentError: 403 Client Error: Forbidden for url: "


def test_a_403_for_a_project_the_pytorch_index_hosts_is_no_project_it_does_not_host() -> None:
    # the case it was written for (pytorch/pytorch#81900): a dependency pip looked up on that index
    assert stated(_PIP_403 + "https://download.pytorch.org/whl/cpu/typing-extensions/\n") == ["pytorch-index-403"]
    # torch's own page on a variant index PyTorch published, or on the root index: the index hosts
    # it, so a proxy, CloudFront's WAF or its geographic restriction refused the request
    assert "pytorch-index-403" not in stated(_PIP_403 + "https://download.pytorch.org/whl/cu121/torch/\n")
    assert "pytorch-index-403" not in stated(_PIP_403 + "https://download.pytorch.org/whl/torchvision/\n")
    # a variant index PyTorch never published (no cu122) does not host torch: still stated
    assert stated(_PIP_403 + "https://download.pytorch.org/whl/cu122/torch/\n") == ["pytorch-index-403"]
