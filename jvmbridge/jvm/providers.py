"""JCE providers the JVM side can measure, and the JVM settings each is measured under."""
from __future__ import annotations

from dataclasses import dataclass

from jvmbridge.jvm.options import INTRINSICS_OFF, INTRINSICS_ON, JvmSetting
from jvmbridge.platforms import current


@dataclass(frozen=True)
class JceProvider:
    name: str  # as --provider spells it
    class_name: str  # "" for the JVM's own SunJCE; otherwise loaded from --classpath
    settings: tuple[JvmSetting, ...]
    where: str  # where its jar comes from, for the error when it is missing

PROVIDERS = {
    # HotSpot's AES intrinsics replace SunJCE's Java code: measure it with them on and off.
    "SunJCE": JceProvider("SunJCE", "", (INTRINSICS_ON, INTRINSICS_OFF), "built into the JDK"),
    # Bouncy Castle's AES is its own Java code, which the intrinsics do not touch.
    "BC": JceProvider("BC", "org.bouncycastle.jce.provider.BouncyCastleProvider",
                      (JvmSetting("JVM defaults, pure-Java AES", (), accelerated=False),),
                      "org.bouncycastle:bcprov-jdk18on (Maven Central)"),
    # ACCP calls AWS-LC through JNI, so it uses AES-NI whatever the HotSpot flags say.
    "ACCP": JceProvider("ACCP", "com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider",
                        (JvmSetting("JVM defaults, native AWS-LC", (), accelerated=True),),
                        "software.amazon.cryptools:AmazonCorrettoCryptoProvider, classifier "
                        f"{current().accp_classifier or 'of this CPU (none published)'}"),
}


def provider(name: str) -> JceProvider:
    """A provider by its --provider name, or any provider class on --classpath by its class name
    (run with the JVM's defaults). ValueError for anything else."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    if "." in name and all(part.isidentifier() for part in name.split(".")):
        return JceProvider(name.rsplit(".", 1)[-1], name, (JvmSetting("JVM defaults", (), accelerated=True),),
                           "the jar passed with --classpath")
    raise ValueError(f"unknown provider {name!r}: choose from {', '.join(PROVIDERS)}, or a provider class name")
