"""One error type with a stable code, in the manner of pip's diagnostic errors.

Results a user should expect (no compatible stack, a problem found) are values, not
exceptions. Exceptions mean torchsmith could not answer: bad input, invalid data, a failed step.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

DOCS_BASE = "docs/errors"


class TorchsmithError(Exception):
    """An error the CLI shows as one line ``error[code]: message`` plus context and a hint."""

    code = "torchsmith-error"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        context: Sequence[str] = (),
        hint: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.context: Tuple[str, ...] = tuple(context)
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "context": list(self.context),
            "hint": self.hint,
        }


class UsageError(TorchsmithError):
    code = "usage"


class ProfileError(TorchsmithError):
    """A host profile (``--host FILE``) or capture could not be read."""

    code = "host-profile-invalid"


class KnowledgeBaseError(TorchsmithError):
    """The compatibility data is missing, corrupted or inconsistent."""

    code = "kb-invalid"


class RequirementError(TorchsmithError):
    code = "requirement-invalid"


class InstallError(TorchsmithError):
    code = "install-failed"
