"""thunder.register_kernel: kernels for the user's own operators (torch.library custom ops)."""
from __future__ import annotations

__all__ = ["registered_names"]

_REGISTRY: dict[str, dict] = {}


def registered_names() -> set[str]:
    """The op names ("mylib.op.default") that have a registered kernel."""
    return set(_REGISTRY)
