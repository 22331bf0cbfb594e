"""What a guard says of its JVM in its system property: "CBC verified <time>Z (...); CTR WRONG ..."."""
from __future__ import annotations

import re
from dataclasses import dataclass

PROPERTY = "jvmbridge.guard"
# Still at it; any other state is final.
UNDER_WAY = ("waiting", "testing")
# Its provider has no such Cipher: nothing to prove right or wrong.
NOT_APPLICABLE = "not applicable"
STATUSES = ("not proven", NOT_APPLICABLE, "verified", "WRONG", *UNDER_WAY)


@dataclass(frozen=True)
class ModeState:
    mode: str  # "CBC", "CTR"
    status: str  # waiting, testing, verified, WRONG, not proven, not applicable
    detail: str  # the time and what was found, as the guard wrote them

    @property
    def settled(self) -> bool:
        return self.status not in UNDER_WAY

    def as_dict(self) -> dict:
        return {"mode": self.mode, "status": self.status, "detail": self.detail}


def parse(text: str) -> list[ModeState]:
    """The property's value, mode by mode; a guard that is not running is one state for no mode."""
    if text.startswith("not running"):
        return [ModeState(mode="", status="not running", detail=text[len("not running"):].strip(" ()"))]
    states = []
    for part in filter(None, (p.strip() for p in text.split("; "))):
        mode, _, rest = part.partition(" ")
        status = next((s for s in STATUSES if rest.startswith(s)), rest.split(" ")[0])
        states.append(ModeState(mode=mode, status=status, detail=rest[len(status):].strip()))
    return states


def summary(states: list[ModeState]) -> str:
    """"guard: CBC verified 10:02, CTR WRONG 10:03 (updates pattern, ...)", for a report's row."""
    return "guard: " + ", ".join(f"{s.status} ({s.detail})" if not s.mode else  # a guard not running
                                 f"{s.mode} {s.status} {_clock(s.detail, s.status in ('WRONG', NOT_APPLICABLE))}".strip()
                                 for s in states)


def _clock(detail: str, with_case: bool) -> str:
    """"yyyy-mm-ddT10:02:44Z (...)" -> "10:02" (with the case: "10:02 (...)")."""
    shown = _STAMP.sub(lambda found: found.group(1), detail, count=1)
    return shown if with_case else shown.split(" (")[0]


_STAMP = re.compile(r"\d{4}-\d\d-\d\dT(\d\d:\d\d):\d\d(?:\.\d+)?Z")
