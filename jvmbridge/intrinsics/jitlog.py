"""Which crypto methods C2 used as intrinsics, from `-Xlog:jit+inlining=debug` (no unlock needed;
-XX:+PrintCompilation lists the Java fallback and marks no intrinsic)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_INLINING_TREE = re.compile(r"^\s*@ \d+\s")  # a decision printed without decorations, as C2 does for some
_INTRINSIC = re.compile(r"com\.sun\.crypto\.provider\.(?P<method>[\w$]+::\w+)\s+\(\d+ bytes\)\s+\(intrinsic")


@dataclass
class Evidence:
    """What a watched run's inlining log showed."""
    seen: list[str] = field(default_factory=list)  # crypto methods logged as (intrinsic), in order
    proven: bool = False
    seconds: float = 0.0
    error: str | None = None  # the JVM did not run

    def as_dict(self) -> dict:
        return {"seen": self.seen, "proven": self.proven, "seconds": round(self.seconds, 2), "error": self.error}


def intrinsic_method(line: str) -> str | None:
    """"CounterMode::implCrypt" for an inlining-log line showing it used as an intrinsic."""
    match = _INTRINSIC.search(line)
    return match["method"] if match else None


def is_inlining_log(line: str) -> bool:
    """Whether ``line`` belongs to the JIT's inlining log, decorated (`[jit,inlining]`) or not."""
    return "inlining" in line or bool(_INLINING_TREE.match(line))
