"""What a guard's property says, read and summarised (fast: the text as the agent writes it)."""
from __future__ import annotations

from jvmbridge.guard.state import parse, summary

WRITTEN = ("CBC verified 2026-12-01T18:49:48Z (27 passes, the last 5 after C2 compiled the self-test and SunJCE's "
           "CipherBlockChaining, 308 cases x 5 call patterns); "
           "CTR WRONG 2026-12-01T18:49:57Z (updates pattern, AES-128 encrypt of 15 bytes: stored bytes past the 15 it "
           "returned); GCM testing since 2026-12-01T18:50:00Z; ECB not proven 2026-12-01T18:51:00Z (why); CFB waiting")


def test_each_mode_its_status_and_what_the_guard_wrote():
    states = parse(WRITTEN)
    assert [(s.mode, s.status) for s in states] == [("CBC", "verified"), ("CTR", "WRONG"), ("GCM", "testing"),
                                                    ("ECB", "not proven"), ("CFB", "waiting")]
    assert states[1].detail.startswith("2026-12-01T18:49:57Z (updates pattern")
    assert [s.settled for s in states] == [True, True, False, True, False]


def test_the_summary_gives_times_and_the_case_only_where_wrong():
    assert summary(parse(WRITTEN)) == ("guard: CBC verified 18:49, CTR WRONG 18:49 (updates pattern, AES-128 encrypt of "
                                      "15 bytes: stored bytes past the 15 it returned), GCM testing since 18:50, "
                                      "ECB not proven 18:51, CFB waiting")
    assert summary(parse("not running (jvmbridge guard: no provider X)")) == \
        "guard: not running (jvmbridge guard: no provider X)"


def test_a_mode_its_provider_does_not_serve_is_settled_as_not_applicable_with_why():
    # As the agent writes it for a provider with no Cipher at all (the JDK's SunPCSC).
    states = parse("CTR not applicable 2026-12-01T18:49:48Z (SunPCSC has no AES/CTR/NoPadding); CBC waiting")
    assert [(s.mode, s.status, s.settled) for s in states] == [("CTR", "not applicable", True), ("CBC", "waiting", False)]
    assert states[0].detail == "2026-12-01T18:49:48Z (SunPCSC has no AES/CTR/NoPadding)"
    assert summary(states) == "guard: CTR not applicable 18:49 (SunPCSC has no AES/CTR/NoPadding), CBC waiting"
