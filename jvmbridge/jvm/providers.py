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
    where: str  # where its jar comes from, for the error when it is missing; "" where only the user knows

PROVIDERS = {
    # HotSpot's AES intrinsics replace SunJCE's Java code: measure it with them on and off.
    "SunJCE": JceProvider(name="SunJCE", class_name="", settings=(INTRINSICS_ON, INTRINSICS_OFF),
                          where="built into the JDK"),
    # Bouncy Castle's AES is its own Java code, which the intrinsics do not touch.
    "BC": JceProvider(name="BC", class_name="org.bouncycastle.jce.provider.BouncyCastleProvider",
                      settings=(JvmSetting(name="JVM defaults, pure-Java AES", options=(), accelerated=False),),
                      where="org.bouncycastle:bcprov-jdk18on (Maven Central)"),
    # ACCP calls AWS-LC through JNI, so it uses AES-NI whatever the HotSpot flags say.
    "ACCP": JceProvider(name="ACCP", class_name="com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider",
                        settings=(JvmSetting(name="JVM defaults, native AWS-LC", options=(), accelerated=True),),
                        where="software.amazon.cryptools:AmazonCorrettoCryptoProvider, classifier "
                              f"{current().accp_classifier or 'of this CPU (none published)'}"),
}


def provider(name: str) -> JceProvider:
    """A provider by --provider name, or a provider class on --classpath; ValueError otherwise."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    if "." in name and all(part.isidentifier() for part in name.split(".")):
        return JceProvider(name=name.rsplit(".", 1)[-1], class_name=name,
                           settings=(JvmSetting(name="JVM defaults", options=(), accelerated=True),), where="")
    raise ValueError(f"unknown provider {name!r}: choose from {', '.join(PROVIDERS)}, or a provider class name")
