"""JSON as strict parsers read it: a non-finite number (Python's NaN, Infinity) is written null."""
from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """Strict JSON of ``value``; what JSON cannot hold otherwise (a path, a date) as its str()."""
    return json.dumps(finite(value), indent=indent, default=str, allow_nan=False)
