"""From divergences to findings: each pattern's smallest failing case, blamed on the curing flag."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.intrinsics.modes import Mode
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
from jvmbridge.verify.known_bugs import KnownBug, matching
from jvmbridge.verify.plan import Case, write_plan
from jvmbridge.verify.sweep import Crash, Divergence, SweepOutcome, Target, run_sweep

# Product flags need no diagnostic unlock; the intrinsic flags do (JDK 9+).
_PRODUCT_FLAGS = {"UseAES"}
# Enough for C2 and a few passes.
REPRODUCE_BUDGET = 15.0


@dataclass
class Finding:
    mode: str
    pattern: str
    case: Case  # the smallest case that failed in this pattern
    divergence: Divergence | None  # None for a crash
    crash: Crash | None
    groups: int  # how many (key size, direction) groups of this pattern failed
    reproduced: bool | None = None  # the same case alone, in a fresh JVM with the same options
    culprit: str | None = None  # the flag whose off-switch makes it right
    known_bug: KnownBug | None = None

    @property
    def workaround(self) -> str | None:
        if self.culprit is None:
            return None
        off = f"-XX:-{self.culprit}"
        return off if self.culprit in _PRODUCT_FLAGS else f"{UNLOCK_DIAGNOSTIC} {off}"

    def attribution(self) -> str:
        if self.reproduced is False:
            return "did not come back in a fresh JVM running this case alone: cause unknown"
        if self.culprit:
            return f"the intrinsic: right with {self.workaround}"
        if self.reproduced:
            return "fails the same with every AES intrinsic flag off: not the intrinsics (JDK library or provider)"
        return "not attributed"

    def as_dict(self) -> dict:
        return {"mode": self.mode, "pattern": self.pattern, "key_bits": self.case.key_bits,
                "direction": self.case.direction, "size": self.case.size, "groups": self.groups,
                "what": self.divergence.what() if self.divergence else "the JVM crashed",
                "first_differing_byte": self.divergence.index if self.divergence else None,
                "crash": ({"lines": self.crash.lines, "report": self.crash.report, "during": self.crash.during}
                          if self.crash else None),
                "reproduced": self.reproduced, "culprit_flag": self.culprit, "workaround": self.workaround,
                "known_bug": self.known_bug.id if self.known_bug else None,
                "known_bug_description": self.known_bug.describe() if self.known_bug else None,
                "attribution": self.attribution()}


def findings(mode: Mode, outcome: SweepOutcome) -> list[Finding]:
    """One finding per call pattern that failed: its smallest case over all passes."""
    by_pattern: dict[str, list[Divergence]] = {}
    for divergence in outcome.divergences:
        by_pattern.setdefault(divergence.pattern, []).append(divergence)
    found = []
    for pattern, divergences in by_pattern.items():
        smallest = min(divergences, key=lambda d: (d.case.size, d.case.key_bits, d.case.direction))
        groups = len({(d.case.key_bits, d.case.direction) for d in divergences})
        found.append(Finding(mode=mode.key, pattern=pattern, case=smallest.case, divergence=smallest, crash=None,
                             groups=groups))
    return found


def attribute(found: list[Finding], target: Target, mode: Mode, cases: list[Case], cpu_features: list[str]) -> None:
    """Run the findings' cases (with their groups' smaller cases) in fresh JVMs, as is and with each
    intrinsic flag off in turn; one JVM per step serves every finding of the mode."""
    group = _with_smaller(found, cases)
    with tempfile.TemporaryDirectory(prefix="jvmbridge-reproduce-") as scratch:
        plan = Path(scratch) / "plan.bin"
        write_plan(plan, mode, group)
        by_id = {c.id: c for c in group}

        def still_failing(todo: list[Finding], extra: tuple[str, ...], prove: bool, passes: int | None):
            """The findings of ``todo`` that fail again, and how many passes that run took."""
            patterns = tuple(dict.fromkeys(f.pattern for f in todo))
            outcome = run_sweep(target.plus_options(*extra), mode, plan, by_id, patterns, REPRODUCE_BUDGET,
                                passes, prove=prove, until_wrong=frozenset(patterns))
            wrong = {d.pattern for d in outcome.divergences}
            return [f for f in todo if f.pattern in wrong or outcome.crash], outcome.passes

        # Until each goes wrong again or the budget is spent: beside other work the JIT may take
        # more passes than in the sweep.
        again, passes = still_failing(found, (), True, None)
        for finding in found:
            finding.reproduced = finding in again
        # Nothing is logged with the intrinsic off: run as many passes as going wrong took.
        for flag in _suspects(mode):
            if not again:
                return
            remaining, _ = still_failing(again, (f"-XX:-{flag}",), False, max(passes + 1, 3))
            for finding in again:
                if finding not in remaining:
                    finding.culprit = flag
                    finding.known_bug = matching(mode.key, flag, target.java.release_version, cpu_features)
            again = remaining


def _with_smaller(found: list[Finding], cases: list[Case]) -> list[Case]:
    """The findings' cases with their groups' smaller cases, in ``cases``' order."""
    wanted = {(f.case.key_bits, f.case.direction, f.pattern): f.case.size for f in found}
    return [c for c in cases if any((c.key_bits, c.direction) == key[:2] and c.size <= size
                                    for key, size in wanted.items())]


def _suspects(mode: Mode) -> list[str]:
    """The mode's own intrinsic flags first (the narrowest workaround), UseAES last."""
    return sorted(mode.flags - _PRODUCT_FLAGS) + sorted(mode.flags & _PRODUCT_FLAGS)
