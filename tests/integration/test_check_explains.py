"""`check` explains what holds an intrinsic off, and tries a fix on the JVM before offering it.

The x86 cases run the real JVM with a lowered UseSSE/UseAVX (HotSpot turns the AES intrinsics off
without a word); the fix probe runs the real JVM with the option it would offer.

Split by tier: here what needs a process; the rest is in tests/unit/test_check_explains.py."""
from __future__ import annotations

import pytest
from helpers import check_json, cpu_has_aes, run_cli, verdicts

from jvmbridge.check.tryfix import tried
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.intrinsics.verdict import Status, decide
from jvmbridge.jvm.discovery import resolve_java
from jvmbridge.jvm.printflags import parse
from jvmbridge.platforms import current

x86_with_aes = pytest.mark.skipif(current().name != "x86_64" or not cpu_has_aes(), reason="needs an x86 CPU with AES-NI")


@x86_with_aes
def test_a_lowered_use_sse_is_named_as_the_cause_and_the_option_to_remove():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=2")
    assert done.returncode == 1
    found = verdicts(document["jdks"][0])
    assert {v["status"] for v in found.values()} == {Status.DISABLED}
    assert found["CBC"]["reason"] == "UseAESIntrinsics=false [UseSSE=2, command line; it needs 3]"
    assert "UseAESCTRIntrinsics=false [UseSSE=2, command line; it needs 4]" in found["GCM"]["reason"]
    assert {v["fix"] for v in found.values()} == {"remove -XX:UseSSE=2 from the JVM's command line"}
    # Said once for the three modes, not three times.
    table = run_cli("check", "-q", "--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=2").stdout
    assert table.count("remove -XX:UseSSE=2") == 1, table


@x86_with_aes
def test_use_sse_3_leaves_cbc_on_and_ctr_off():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=3", "--mode", "cbc",
                                "--mode", "ctr")
    found = verdicts(document["jdks"][0])
    assert found["CBC"]["status"] == Status.ACTIVE
    assert (found["CTR"]["status"], found["CTR"]["reason"]) == (
        Status.DISABLED, "UseAESCTRIntrinsics=false [UseSSE=3, command line; it needs 4]")


@pytest.mark.skipif(not {"avx512f", "vaes"} <= set(open("/proc/cpuinfo").read().split()),
                    reason="needs a CPU with AVX-512 and VAES")
def test_use_avx_below_3_is_active_but_says_the_widest_stubs_stay_unused():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseAVX=2", "--mode", "ctr")
    ctr = verdicts(document["jdks"][0])["CTR"]
    assert ctr["status"] == Status.ACTIVE
    assert ctr["reason"].endswith("; UseAVX=2 [command line]: this CPU's AVX-512/VAES stubs stay unused")
    assert ctr["fix"] == "remove -XX:UseAVX=2 from the JVM's command line"


def _ctr_off_by_default():
    return parse("bool UseAES = true {product} {default}\n"
                 "bool UseAESCTRIntrinsics = false {diagnostic} {default}\n")


@x86_with_aes
def test_the_fix_for_a_flag_off_by_default_is_tried_on_the_real_jvm():
    # As an older aarch64 update reports CTR; this JVM has the stub, so asking for it takes.
    flags = _ctr_off_by_default()
    verdict = decide(MODES["ctr"], 17, ["aes"], flags, None)
    assert verdict.status == Status.DISABLED
    confirmed = tried(verdict, MODES["ctr"], resolve_java("java"), (), flags)
    assert confirmed.fix == (f"{verdict.fix} (tried: with it this JVM reports UseAESCTRIntrinsics=true)")


@x86_with_aes
def test_a_fix_the_jvm_refuses_is_replaced_by_what_the_jvm_said():
    # Under UseSSE=3 HotSpot keeps CTR off even when asked, and says why.
    flags = _ctr_off_by_default()
    verdict = decide(MODES["ctr"], 17, ["aes"], flags, None)
    refused = tried(verdict, MODES["ctr"], resolve_java("java"), ("-XX:UseSSE=3",), flags)
    assert refused.fix.startswith("-XX:+UnlockDiagnosticVMOptions -XX:+UseAESCTRIntrinsics leaves "
                                  "UseAESCTRIntrinsics off in this JVM (it says: ")
    assert "X86 AES-CTR intrinsics require SSE4.1 instructions or higher" in refused.fix
