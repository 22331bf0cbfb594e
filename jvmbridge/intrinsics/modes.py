"""The AES modes `check` and `verify` look at: the JIT intrinsics that prove each, and the flags
that gate them."""
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
        # An unknown version (0) keeps every path: better to look for too much than to miss one.
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


# Each path lists the flags HotSpot's C2 tests before it uses the intrinsic (vmIntrinsics.cpp). The
# CTR stub answers to UseAESCTRIntrinsics alone: x86 turns that off with UseAES, aarch64 does not, so
# there -XX:-UseAES leaves CTR (and GCM's CTR + GHASH) accelerated.
MODES = {
    "cbc": Mode(name="CBC", transformation="AES/CBC/PKCS5Padding",
                paths=(Path(methods=frozenset({"CipherBlockChaining::implEncrypt"}),
                            flags=("UseAES", "UseAESIntrinsics")),)),
    "ctr": Mode(name="CTR", transformation="AES/CTR/NoPadding",
                paths=(Path(methods=frozenset({"CounterMode::implCrypt"}), flags=("UseAESCTRIntrinsics",)),)),
    # JDK 18+ has one AVX-512/VAES stub for all of GCM; JDK 17 (or a CPU without it) uses CTR + GHASH.
    "gcm": Mode(name="GCM", transformation="AES/GCM/NoPadding",
                paths=(Path(methods=frozenset({"GaloisCounterMode::implGCMCrypt0"}),
                            flags=("UseAES", "UseAESIntrinsics"), since_java=18),
                       Path(methods=frozenset({"CounterMode::implCrypt", "GHASH::processBlocks"}),
                            flags=("UseAESCTRIntrinsics", "UseGHASHIntrinsics")))),
    # CFB and ECB have no mode stub of their own on x86 here: the single-block intrinsic proves them.
    "cfb": Mode(name="CFB", transformation="AES/CFB/NoPadding",
                paths=(Path(methods=frozenset({"AESCrypt::implEncryptBlock"}), flags=("UseAES", "UseAESIntrinsics")),)),
    "ecb": Mode(name="ECB", transformation="AES/ECB/PKCS5Padding",
                paths=(Path(methods=frozenset({"AESCrypt::implEncryptBlock"}), flags=("UseAES", "UseAESIntrinsics")),)),
}
# What `check` and `verify` look at unless told otherwise: the modes servers use.
DEFAULT_MODES = ("cbc", "ctr", "gcm")
