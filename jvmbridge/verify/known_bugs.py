"""JDK bugs that make AES intrinsics compute wrong bytes, named when a divergence matches one; only
what OpenJDK's records confirm is stated, the rest is None ("unknown").
"""
from __future__ import annotations

from dataclasses import dataclass

from jvmbridge.host.cpu import lacks
from jvmbridge.jvm.options import java_major
from jvmbridge.wholenumber import whole_number


@dataclass(frozen=True)
class KnownBug:
    id: str
    title: str
    mode: str  # "ctr", "gcm", ...
    flag: str  # the intrinsic flag whose off-switch avoids it
    cpu_features: tuple[str, ...]  # all needed for the buggy stub to be used
    fixed_in: dict[int, str] | None  # feature release -> first fixed update; None: unknown
    first_fixed_release: int | None  # the first feature release that never had it

    def affects(self, version: str) -> bool | None:
        """True or False for a version we can place; None when the fixed versions are unknown."""
        major = java_major(version)
        if self.fixed_in is None or major == 0:
            return None
        if self.first_fixed_release is not None and major >= self.first_fixed_release:
            return False
        fixed = self.fixed_in.get(major)
        return fixed is None or _older(version, fixed)

    def describe(self) -> str:
        fixed = ("fixed in " + ", ".join(self.fixed_in.values())
                 + (f", {self.first_fixed_release}" if self.first_fixed_release else "")
                 if self.fixed_in else "fixed-in versions unknown")
        return f"{self.id} ({self.title}; {fixed})"


# JDK-8292158: the AVX-512 CTR stub (JDK-8233741); fixed in 20, backported to 11.0.18, 17.0.6, 19.0.2
# (openjdk/jdk PR 9635, jdk17u-dev PR 787, jdk11u-dev PR 1406, jdk19u PR 51).
# JDK-8371864: JDK 25's AVX2/AVX-512 GCM stubs; the first fixed 25.0.x is unconfirmed.
KNOWN_BUGS = (
    KnownBug(id="JDK-8292158", title="AES-CTR cipher state corruption with AVX-512, calls of fewer than 16 bytes",
             mode="ctr", flag="UseAESCTRIntrinsics", cpu_features=("avx512f", "vaes"),
             fixed_in={11: "11.0.18", 17: "17.0.6", 19: "19.0.2"}, first_fixed_release=20),
    KnownBug(id="JDK-8371864", title="GaloisCounterMode.implGCMCrypt0 AVX512/AVX2 stubs give wrong AES-GCM "
                                     "ciphertext for certain payload sizes",
             mode="gcm", flag="UseAESIntrinsics", cpu_features=("avx2",), fixed_in=None, first_fixed_release=None),
)


def matching(mode: str, flag: str, version: str, cpu_features: list[str] | None) -> KnownBug | None:
    """The known bug fitting a divergence ``flag`` cures, unless the JDK is fixed or the CPU lacks the stub."""
    return next((bug for bug in candidates(mode, version, cpu_features) if bug.flag == flag), None)


def candidates(mode: str, version: str, cpu_features: list[str] | None) -> list[KnownBug]:
    """The known bugs a wrong ``mode`` answer may be on this JDK and CPU."""
    return [bug for bug in KNOWN_BUGS if bug.mode == mode and bug.affects(version) is not False
            and not any(lacks(cpu_features, feature) for feature in bug.cpu_features)]


def _older(version: str, than: str) -> bool:
    def numbers(text: str) -> tuple[int, ...]:
        parts = (whole_number(part, most_digits=9) for part in text.split("+")[0].split("-")[0].split("."))
        return tuple(part for part in parts if part is not None)

    return numbers(version) < numbers(than)
