"""The AES modes `check` and `verify` look at, the intrinsics proving each and the flags gating them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Path:
    """One way HotSpot accelerates a mode: these methods become intrinsics when these flags are on."""
    methods: frozenset[str]
    flags: tuple[str, ...]
    since_java: int = 9


@dataclass(frozen=True)
class Mode:
    name: str
    transformation: str
    paths: tuple[Path, ...]

    def paths_for(self, java_major: int) -> list[Path]:
        # Unknown (0) keeps every path: better to look for too much than miss one.
        return [p for p in self.paths if java_major == 0 or java_major >= p.since_java]

    def proven_by(self, seen: set[str]) -> bool:
        return any(path.methods <= seen for path in self.paths)

    @property
    def flags(self) -> set[str]:
        return {flag for path in self.paths for flag in path.flags}

    @property
    def key(self) -> str:
        """The mode's name on the command line and in pyca: "cbc", "gcm", ..."""
        return self.name.lower()

    @property
    def expected(self) -> str:
        return " or ".join(" + ".join(sorted(path.methods)) for path in self.paths)


# The flags C2 tests before each intrinsic (vmIntrinsics.cpp). The CTR stub answers to
# UseAESCTRIntrinsics alone: on aarch64 -XX:-UseAES leaves CTR (and GCM's CTR + GHASH) on.
MODES = {
    "cbc": Mode(name="CBC", transformation="AES/CBC/PKCS5Padding",
                paths=(Path(methods=frozenset({"CipherBlockChaining::implEncrypt"}),
                            flags=("UseAES", "UseAESIntrinsics")),)),
    "ctr": Mode(name="CTR", transformation="AES/CTR/NoPadding",
                paths=(Path(methods=frozenset({"CounterMode::implCrypt"}), flags=("UseAESCTRIntrinsics",)),)),
    # JDK 18+: one AVX-512/VAES stub for GCM; else CTR + GHASH.
    "gcm": Mode(name="GCM", transformation="AES/GCM/NoPadding",
                paths=(Path(methods=frozenset({"GaloisCounterMode::implGCMCrypt0"}),
                            flags=("UseAES", "UseAESIntrinsics"), since_java=18),
                       Path(methods=frozenset({"CounterMode::implCrypt", "GHASH::processBlocks"}),
                            flags=("UseAESCTRIntrinsics", "UseGHASHIntrinsics")))),
    # No mode stub on x86: the single-block intrinsic proves them.
    "cfb": Mode(name="CFB", transformation="AES/CFB/NoPadding",
                paths=(Path(methods=frozenset({"AESCrypt::implEncryptBlock"}), flags=("UseAES", "UseAESIntrinsics")),)),
    "ecb": Mode(name="ECB", transformation="AES/ECB/PKCS5Padding",
                paths=(Path(methods=frozenset({"AESCrypt::implEncryptBlock"}), flags=("UseAES", "UseAESIntrinsics")),)),
}
# The modes servers use.
DEFAULT_MODES = ("cbc", "ctr", "gcm")
