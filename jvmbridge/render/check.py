"""A `check` document: the short summary for people, the document itself as JSON."""
from __future__ import annotations

from jvmbridge.intrinsics.verdict import Status
from jvmbridge.render.text import align, as_json, printable

_SUMMARY = {0: "AES acceleration is active everywhere checked.",
            "wrong": "AES acceleration computes WRONG bytes somewhere (see above): do not trust it as configured.",
            1: "AES acceleration is NOT active somewhere (see above).",
            2: "Could not tell everywhere whether AES acceleration is active (see above)."}

_PRESENT = {True: "yes", False: "no", None: "unknown"}


def render_json(document: dict) -> str:
    return as_json(document)


def render_table(document: dict) -> str:
    cpu = document["cpu"]
    lines = [f"Host {printable(document['host'])}: {printable(cpu['model'])}"]
    if cpu.get("emulation"):  # documents written before it was recorded do not say
        lines.append(f"EMULATED {cpu['emulation']}: verdicts rest on the JVM's flags and its JIT"
                     + ("; the CPU's features are not known" if all(f["present"] is None
                                                                   for f in cpu["features"].values()) else ""))
    if cpu.get("vm_hides"):
        lines.append(f"VM       its CPU model passes on aes but not {', '.join(cpu['vm_hides'])}: if the host's CPU has "
                     "them, a host-passthrough CPU model gives the JVM (and OpenSSL) the faster stubs")
    lines.append("CPU")
    lines += ["  " + line for line in align(
        [[name, _PRESENT[f["present"]], f["enables"]] for name, f in cpu["features"].items()])]
    for jdk in document["jdks"]:
        lines += ["", f"JDK {printable(jdk['java_home'])} ({printable(jdk['version'])})"
                  + (f" with {' '.join(jdk['options'])}" if jdk["options"] else "")]
        lines += _flags_and_verdicts(jdk)
    if document["live_jvms"]:
        lines += ["", "Running JVMs (flags read over the attach socket; no JIT evidence)"]
        for live in document["live_jvms"]:
            lines.append(f"  pid {live['pid']}" + (f" {printable(live['java_home'])}: "
                                                   f"{printable(live['command_line'])[:100]}"
                                                   if "java_home" in live else ""))
            lines += ["  " + line for line in _flags_and_verdicts(live)]
    wrong = any(v["status"] == Status.WRONG for part in (*document["jdks"], *document["live_jvms"]) for v in part["verdicts"])
    lines += ["", _SUMMARY["wrong" if wrong else document["exit_code"]]]
    return "\n".join(lines) + "\n"


def _flags_and_verdicts(part: dict) -> list[str]:
    if "error" in part:
        return [f"  error: {printable(part['error'])}"]
    flags = " ".join(f"{name}={f['value']}" for name, f in part["flags"].items())
    flags = printable(flags)
    fixes = dict.fromkeys(v["fix"] for v in part["verdicts"] if v.get("fix"))  # one line per fix, not per mode
    return ([f"  flags: {flags}"] + ["  " + line for line in align(
        [[v["mode"], v["status"], v["reason"]] for v in part["verdicts"]])]
            + [f"  fix ({', '.join(v['mode'] for v in part['verdicts'] if v.get('fix') == fix)}): {printable(fix)}"
               for fix in fixes])
