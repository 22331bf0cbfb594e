"""What a platform is (Platform): the base of each architecture's module."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar


class FlagValue(Protocol):
    """A JVM flag's value as PrintFlagsFinal prints it (platforms know nothing of the JVM side)."""

    @property
    def value(self) -> str: ...


F = TypeVar("F", bound=FlagValue)


# Platform.emulation() for a process qemu translates under the host's kernel (not a whole machine).
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
        """``base`` with OpenSSL's AES masked, or the variable removed (empty would mask nearly all)."""
        env = {k: v for k, v in base.items() if k != self.openssl_variable}
        if not accelerated and self.openssl_variable:
            env[self.openssl_variable] = self.openssl_off_value()
        return env

    def openssl_off_value(self) -> str:
        """The ``openssl_variable`` value that keeps OpenSSL off the AES instructions."""
        raise NotImplementedError

    def model(self, fields: dict[str, str]) -> str | None:
        """The CPU's name from the first block of /proc/cpuinfo."""
        return fields.get("model name")

    def emulation(self, fields: dict[str, str]) -> str | None:
        """How this CPU is emulated in software (timings then mean nothing), or None."""
        model = fields.get("model name", "")
        return f"QEMU's software CPU ({model})" if model.startswith("QEMU Virtual CPU") else None

    # Intrinsic flag -> flags whose false turns it off too here, so hidden diagnostic flags read right.
    implied_off: dict[str, tuple[str, ...]] = {"UseAESIntrinsics": ("UseAES",)}

    def held_off(self, flags: Mapping[str, F]) -> dict[str, tuple[F, int]]:
        """Intrinsic flag -> (level flag holding it off, level needed): on x86 a low UseSSE turns AES
        intrinsics off silently."""
        return {}

    def slowed(self, flags: Mapping[str, F], features: list[str] | None) -> F | None:
        """The level flag keeping this CPU's widest AES stubs unused, if any."""
        return None

    def off_by_default(self, name: str) -> str:
        """Why ``name`` can be off by default here, and the options switching it on."""
        return f"off by default in this JDK: add -XX:+UnlockDiagnosticVMOptions -XX:+{name}"

    def no_stub(self, name: str) -> str:
        """What to do when this JVM keeps ``name`` off even when asked."""
        return "this JVM has no such stub for this CPU; a newer JDK may"

    def vm_hides(self, fields: dict[str, str]) -> list[str]:
        """In a VM, the AES features its CPU model does not pass on; empty otherwise."""
        return []

    def openssl_value_off(self, value: str) -> bool | None:
        """Whether ``openssl_variable=value`` leaves the AES instructions unused; None if unreadable."""
        return None

    def openssl_state(self, cpuinfo: str) -> tuple[bool, str]:
        """From OpenSSL's "CPUINFO: ..." line: whether it uses AES instructions, and that state."""
        raise ValueError(f"jvmbridge cannot read OpenSSL's CPU settings on {self.name}")
