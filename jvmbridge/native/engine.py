"""Parent side of the native measurements: pyca/cryptography in a child, `openssl speed` directly."""
from __future__ import annotations

import os

from jvmbridge.child import WorkerError, rounds_of, run_forks
from jvmbridge.native import ia32cap, openssl_cli
from jvmbridge.results import OPENSSL_CLI, PYCA, Measurement
from jvmbridge.measure import merge_warmups
from jvmbridge.stats import summarize
from jvmbridge.workload import Workload

# The Python loop has no JIT to wait for; a short warm-up settles caches and allocator.
PYCA_WARMUP = {"warmup_min_seconds": 0.2, "warmup_max_seconds": 3.0}


def _setting(aesni: bool) -> str:
    return "AES-NI on" if aesni else "AES-NI off"


def _verify_mask(cpuinfo: str, aesni: bool, cpu_has_aes: bool) -> tuple[bool, str]:
    """Whether OpenSSL's capability words show AES-NI as asked, and those words for the report."""
    try:
        in_use, shown = ia32cap.describe(cpuinfo)
    except ValueError:
        return False, "ia32cap unknown (no CPUINFO from OpenSSL)"
    return in_use == (aesni and cpu_has_aes), shown


def measure_pyca(workload: Workload, aesni: bool, cpu_has_aes: bool) -> Measurement:
    request = {**workload.loop_request(), "mode": workload.mode, **PYCA_WARMUP}
    outcomes, failed = run_forks("jvmbridge.native.pyca_worker", request, workload,
                                 env=ia32cap.environment(dict(os.environ), aesni))
    if failed:
        raise WorkerError(failed.error)
    result = outcomes[0].result
    as_requested, state = _verify_mask(result["cpuinfo"], aesni, cpu_has_aes)
    summary = summarize(rounds_of(outcomes), len(outcomes))
    notes = ["fresh encryptor (and padder for CBC) per message; includes Python call overhead"
             if workload.shape == "message"
             else "update_into on one encryptor; includes Python call overhead"]
    asked = None if workload.iterations is None else workload.iterations * workload.threads * len(outcomes)
    if asked is not None and summary.iterations < asked:
        notes.append(f"ran {summary.iterations:,} of {asked:,} messages (time budget)")
    return Measurement(
        engine=PYCA, implementation=f"{result['library']}, {result['openssl_version']}",
        setting=_setting(aesni), accelerated=aesni, as_requested=as_requested, verified_state=state,
        shape=workload.shape, message_bytes=workload.message_bytes, threads=workload.threads, summary=summary,
        warmup=merge_warmups([o.result["warmup"] for o in outcomes]), ciphertext=result["ciphertext"],
        details={"openssl_cpuinfo": result["cpuinfo"]}, notes=notes,
    )


def measure_openssl_cli(openssl: str, workload: Workload, aesni: bool, cpu_has_aes: bool,
                        extra_args: tuple[str, ...] = ()) -> Measurement:
    env = ia32cap.environment(dict(os.environ), aesni)
    described = openssl_cli.describe(openssl, env)
    as_requested, state = _verify_mask(described["cpuinfo"], aesni, cpu_has_aes)
    decrypt = ("-decrypt",) if workload.direction == "decrypt" else ()
    # `openssl speed -seconds` takes whole seconds and counts operations itself: --iterations cannot apply.
    seconds = max(1, round(workload.round_seconds))
    command = openssl_cli.speed_command(openssl, workload.cipher_name, workload.message_bytes, seconds,
                                        (*extra_args, *decrypt), workload.threads)
    # Each `openssl speed` run is its own process already: a "fork" is `rounds` more runs.
    rounds, forks = [], 0
    while workload.wants_another_fork(rounds, forks):
        rounds += [openssl_cli.speed_round(command, env, workload.threads) for _ in range(workload.rounds)]
        forks += 1
    notes = [f"EVP_{workload.direction.capitalize()}Update on a {workload.message_bytes}-byte buffer, "
             f"no per-message init or padding; {len(rounds)} runs of {seconds} s"
             + (f", each of {workload.threads} processes (-multi)" if workload.threads > 1 else "")]
    if decrypt and workload.mode == "cbc":
        notes.append(f"decrypts {workload.message_bytes} bytes per operation; the JVM and pyca decrypt the padded "
                     f"ciphertext ({(workload.message_bytes // 16 + 1) * 16} bytes)")
    return Measurement(
        engine=OPENSSL_CLI, implementation=described["openssl_version"],
        setting=_setting(aesni), accelerated=aesni, as_requested=as_requested, verified_state=state,
        shape="stream", message_bytes=workload.message_bytes, threads=workload.threads,
        summary=summarize(rounds, forks),
        details={"openssl_cpuinfo": described["cpuinfo"], "command": " ".join(command)},
        notes=notes,
    )
