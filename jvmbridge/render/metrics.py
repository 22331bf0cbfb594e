"""`check` and `fleet` documents as Prometheus metrics. Names, labels and states are the interface of
monitoring/jvmbridge-alerts.yml and jmx-exporter-guard.yml: a change here changes every rule on them."""
from __future__ import annotations

import datetime

from jvmbridge.fleet.report import Fleet
from jvmbridge.intrinsics.verdict import Status
from jvmbridge.jvm.options import main_class
from jvmbridge.render.exposition import Gauge, exposition
from jvmbridge.version import __version__

# Short, lower case, the same in every document.
VERDICT_STATES = {Status.ACTIVE: "active", Status.IN_USE: "in_use", Status.VERIFIED: "verified", Status.WRONG: "wrong",
                  Status.NOT_IN_USE: "not_in_use", Status.DISABLED: "disabled", Status.NOT_USABLE: "not_usable",
                  Status.UNSUPPORTED: "unsupported", Status.NOT_OBSERVED: "not_observed", Status.UNKNOWN: "unknown"}
# A guard's mode states; "unknown" for what a newer guard may say; no alert or verdict counts
# not_applicable (no such Cipher in its provider).
GUARD_STATES = ("waiting", "testing", "verified", "wrong", "not_proven", "not_applicable", "unknown")


class _Families:
    """Every family a document can give, in write order."""

    def __init__(self):
        self.build = Gauge(name="jvmbridge_build_info",
                           help="The jvmbridge that checked (or, for a fleet, reported), 1.")
        self.cpu = Gauge(name="jvmbridge_cpu_info", help="The CPU check saw, 1; emulation names a CPU emulator.")
        self.feature = Gauge(name="jvmbridge_cpu_feature_present",
                             help="1 when the CPU reports the feature, 0 when not; no sample when not known.")
        self.time = Gauge(name="jvmbridge_check_timestamp_seconds",
                          help="When the check ran, in seconds since the epoch.")
        self.duration = Gauge(name="jvmbridge_check_duration_seconds", help="How long the check took.")
        self.exit = Gauge(name="jvmbridge_check_exit_code",
                          help="The check's exit code: 0 all active, 1 something not active or wrong, 2 could not tell.")
        self.host_checked = Gauge(name="jvmbridge_host_checked",
                                  help="1 when the host gave a check document, 0 when not.")
        self.checked = Gauge(name="jvmbridge_target_checked",
                             help="1 when the JDK ran or the running JVM could be read, 0 when not (verdicts unknown).")
        self.active = Gauge(name="jvmbridge_aes_intrinsics_active",
                            help="1 when the JVM uses the AES intrinsics for the mode, 0 when not; "
                                 "no sample when that could not be told.")
        self.correct = Gauge(name="jvmbridge_aes_verified_correct",
                             help="1 when the mode's bytes matched OpenSSL's after the JIT, 0 when they did not; "
                                  "no sample when not verified.")
        self.verdict = Gauge(name="jvmbridge_aes_verdict",
                             help="The mode's verdict: 1 for its state, 0 for the others.")
        self.guard = Gauge(name="jvmbridge_guard_running",
                           help="1 when a jvmbridge guard agent runs in the JVM, 0 when not.")
        self.guard_state = Gauge(name="jvmbridge_guard_mode_state",
                                 help="What the JVM's guard found for the mode: 1 for its state, 0 for the others.")

    def verdicts(self, verdicts: list[dict], **labels: str) -> None:
        for v in verdicts:
            status = Status(v["status"])
            mode = {**labels, "mode": v["mode"]}
            # Not in use yet: neither 1 nor 0.
            if status not in (Status.NOT_OBSERVED, Status.UNKNOWN, Status.NOT_IN_USE):
                self.active.set(1 if status.active or status is Status.WRONG else 0, **mode)
            if status in (Status.VERIFIED, Status.WRONG):
                self.correct.set(1 if status is Status.VERIFIED else 0, **mode)
            self.verdict.states(VERDICT_STATES[status], tuple(VERDICT_STATES.values()), **mode)

    def text(self) -> str:
        return exposition(list(vars(self).values()))


def check_metrics(document: dict) -> str:
    """A `check` document's metrics: host, CPU, each mode's verdict per JDK and running JVM."""
    families, host = _Families(), document["host"]
    families.build.set(1, host=host, version=document.get("jvmbridge_version", ""))
    _cpu(families, document["cpu"], host)
    if "checked_utc" in document:
        families.time.set(datetime.datetime.fromisoformat(document["checked_utc"]).timestamp(), host=host)
    if "duration_seconds" in document:  # schema 5 on
        families.duration.set(document["duration_seconds"], host=host)
    families.exit.set(document["exit_code"], host=host)
    for jdk in document["jdks"]:
        target = {"host": host, "kind": "jdk", "java_home": jdk["java_home"], "version": jdk["version"],
                  "options": " ".join(jdk["options"])}
        families.checked.set(0 if "error" in jdk else 1, **target)
        families.verdicts(jdk["verdicts"], **target)
    for live in document["live_jvms"]:
        target = {"host": host, "kind": "jvm", "pid": str(live["pid"]), "java_home": live.get("java_home", ""),
                  "version": live.get("version", ""), "main_class": main_class(live.get("arguments", []))}
        families.checked.set(0 if "error" in live else 1, **target)
        families.verdicts(live["verdicts"], **target)
        if "error" not in live and "guard" in live:  # documents before schema 4 did not read the guard
            _guard(families, live["guard"], target)
    return families.text()


def _cpu(families: _Families, cpu: dict, host: str) -> None:
    families.cpu.set(1, host=host, model=cpu["model"], emulation=cpu.get("emulation") or "")
    for name, feature in cpu["features"].items():
        if feature["present"] is not None:
            families.feature.set(int(feature["present"]), host=host, feature=name)


def _guard(families: _Families, states: list[dict], target: dict[str, str]) -> None:
    running = [s for s in states if s["mode"]]  # a guard that is not running is one state for no mode
    families.guard.set(1 if running else 0, **target)
    for state in running:
        said = state["status"].replace(" ", "_").lower()
        families.guard_state.states(said if said in GUARD_STATES else "unknown", GUARD_STATES,
                                    **target, mode=state["mode"])


def fleet_metrics(fleet: Fleet) -> str:
    """A fleet's metrics for pushing: per host whether checked, and each row's verdict."""
    families = _Families()
    families.build.set(1, version=__version__)
    for host in fleet.hosts:
        families.host_checked.set(0 if host in fleet.unchecked else 1, host=host)
    for row in fleet.rows:
        families.verdicts([{"mode": row.mode, "status": row.status}], host=row.host, target=row.jvm)
    return families.text()
