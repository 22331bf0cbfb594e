"""What a platform is (Platform): the base each architecture's module builds on, below the
registry (jvmbridge.platforms) that picks this machine's."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar


class FlagValue(Protocol):
    """What a platform reads of a JVM flag: its value as PrintFlagsFinal prints it (the flags are
    jvmbridge.jvm.printflags.Flag, a layer above: the platforms know nothing of the JVM side)."""

    @property
    def value(self) -> str: ...


F = TypeVar("F", bound=FlagValue)


# How Platform.emulation() starts for a process whose instructions qemu translates one by one under
# the host's kernel (not a whole emulated machine).
QEMU_USER = "qemu-user"


class Platform:
    name = "unknown"
    machines: tuple[str, ...] = ()  # platform.machine() spellings
    accelerator = "CPU AES instructions"  # what users call OpenSSL's AES instructions here
    features_key = "flags"  # the /proc/cpuinfo line that lists CPU features
    aes_features: dict[str, str] = {}  # feature -> what it enables, in the order reports list them
    aes_feature = "aes"  # without it there is no AES acceleration to switch
    openssl_variable: str | None = None  # the environment variable OpenSSL reads its CPU settings from
    accp_classifier: str | None = None  # the Maven classifier of ACCP's jar with AWS-LC for this CPU

    def setting(self, accelerated: bool) -> str:
        """A native row's setting: "AES-NI on"."""
        return f"{self.accelerator} {'on' if accelerated else 'off'}"

    def openssl_environment(self, base: dict[str, str], accelerated: bool) -> dict[str, str]:
        """``base`` with OpenSSL's AES acceleration masked, or with the variable removed (an empty
        value would mask nearly every capability rather than none)."""
        env = {k: v for k, v in base.items() if k != self.openssl_variable}
        if not accelerated and self.openssl_variable:
            env[self.openssl_variable] = self.openssl_off_value()
        return env

    def openssl_off_value(self) -> str:
        """What ``openssl_variable`` is set to so that OpenSSL leaves the AES instructions alone."""
        raise NotImplementedError

    def model(self, fields: dict[str, str]) -> str | None:
        """The CPU's name from the first block of /proc/cpuinfo."""
        return fields.get("model name")

    def emulation(self, fields: dict[str, str]) -> str | None:
        """How this CPU is emulated in software, if it is (then timings mean nothing), from the first
        block of /proc/cpuinfo; None for real hardware (a VM on a real CPU is real hardware)."""
        model = fields.get("model name", "")
        return f"QEMU's software CPU ({model})" if model.startswith("QEMU Virtual CPU") else None

    # Intrinsic flag -> flags whose false turns it off too on this architecture (vm_version_<cpu>.cpp),
    # so a running JVM whose diagnostic flags are hidden is still read right.
    implied_off: dict[str, tuple[str, ...]] = {"UseAESIntrinsics": ("UseAES",)}

    def held_off(self, flags: Mapping[str, F]) -> dict[str, tuple[F, int]]:
        """Intrinsic flag -> (the level flag holding it off, the level it needs), from PrintFlagsFinal's
        flags: on x86 a lowered UseSSE turns AES intrinsics off with no word about why."""
        return {}

    def slowed(self, flags: Mapping[str, F], features: list[str] | None) -> F | None:
        """The level flag that keeps this CPU's widest AES stubs unused, if one does."""
        return None

    def off_by_default(self, name: str) -> str:
        """Why ``name`` can be off by default in a JDK here, and the options that switch it on."""
        return f"off by default in this JDK: add -XX:+UnlockDiagnosticVMOptions -XX:+{name}"

    def no_stub(self, name: str) -> str:
        """What to do when this JVM keeps ``name`` off even when asked to switch it on."""
        return "this JVM has no such stub for this CPU; a newer JDK may"

    def vm_hides(self, fields: dict[str, str]) -> list[str]:
        """In a virtual machine, the AES-related features its CPU model does not pass on (the host
        may well have them); empty on bare metal or where nothing is missing."""
        return []

    def openssl_value_off(self, value: str) -> bool | None:
        """Whether OpenSSL started with ``openssl_variable=value`` leaves the AES instructions unused
        (False: it uses them where the CPU has them); None if the value cannot be read."""
        return None

    def openssl_state(self, cpuinfo: str) -> tuple[bool, str]:
        """From OpenSSL's "CPUINFO: ..." line: whether it uses the AES instructions, and that state
        as reports show it. ValueError when the line says nothing this platform can read."""
        raise ValueError(f"jvmbridge cannot read OpenSSL's CPU settings on {self.name}")
