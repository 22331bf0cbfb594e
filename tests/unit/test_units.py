"""Pure functions whose mistakes would skew every figure: counts, masks, flags, rounds."""
from __future__ import annotations

import itertools
import mmap
import time

import pytest

from jvmbridge.forks.measure import split_iterations
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC, java_major, launch_options, requested_flags
from jvmbridge.platforms import x86_64
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import SWEEP_SIZES, parse_count, parse_sizes


@pytest.mark.parametrize("text, count", [("1e8", 10**8), ("100000000", 10**8), ("1_000_000", 10**6),
                                         ("2.5e6", 2_500_000), (" 7 ", 7)])
def test_parse_count(text, count):
    assert parse_count(text) == count


@pytest.mark.parametrize("iterations, rounds", [(10, 3), (5, 5), (3, 10), (10**8, 7)])
def test_split_iterations_runs_exactly_the_count(iterations, rounds):
    parts = split_iterations(iterations, rounds)
    assert sum(parts) == iterations
    assert max(parts) - min(parts) <= 1 and min(parts) >= 1


def test_sizes_take_a_list_or_the_sweep():
    assert parse_sizes("16,64,16") == [16, 64]
    assert parse_sizes("sweep") == list(SWEEP_SIZES) == [16, 38, 64, 256, 1024, 8192, 16384]
    with pytest.raises(ValueError, match="nor \"sweep\""):
        parse_sizes("16,big")


def test_unlock_precedes_every_user_option():
    options = launch_options(["-XX:-UseAESIntrinsics"], java_major("17.0.15"))
    assert options[0] == UNLOCK_DIAGNOSTIC
    assert options[-1] == "-XX:-UseAESIntrinsics"
    assert "--enable-native-access=ALL-UNNAMED" in launch_options([], java_major("25.0.3"))


def test_requested_flags_take_the_last_word():
    assert requested_flags(["-XX:-UseAES", "-XX:+UseAES", "-XX:AESKeySize=1", "-Xmx1g"]) == {
        "UseAES": "true", "AESKeySize": "1"}


@pytest.mark.parametrize("version, major", [("17.0.15", 17), ("1.8.0_402", 8), ("25", 25), ("unknown", 0)])
def test_java_major(version, major):
    assert java_major(version) == major


def test_mask_clears_aesni_and_pclmul_only():
    on = "CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab"
    off = "CPUINFO: OPENSSL_ia32cap=0xfdfa3201078bffff:0x4059c6f1bf07ab env:~0x200000200000000:~0x60000000000"
    assert x86_64.aesni_in_use(on) and not x86_64.aesni_in_use(off)
    before, after = x86_64.capability_words(on), x86_64.capability_words(off)
    assert before[0] ^ after[0] == (1 << x86_64.AESNI_BIT) | (1 << x86_64.PCLMULQDQ_BIT)


def test_environment_unsets_rather_than_empties():
    x86 = x86_64.X86_64()
    assert "OPENSSL_ia32cap" not in x86.openssl_environment({"OPENSSL_ia32cap": "", "A": "1"}, accelerated=True)
    assert x86.openssl_environment({}, accelerated=False)["OPENSSL_ia32cap"] == x86_64.AESNI_OFF_MASK


@pytest.mark.parametrize("df, expected", [(1, 636.619), (4, 8.610), (9, 4.781), (29, 3.659), (1000, 3.300)])
def test_t_quantile_matches_published_tables(df, expected):
    from jvmbridge.stats.summary import t_quantile

    assert t_quantile(0.9995, df) == pytest.approx(expected, rel=1e-3)


def test_jmhs_pooled_score_and_error_stay_beside_the_figure():
    from jvmbridge.stats.summary import summarize

    rounds = [{"iterations": 10, "ns": ns} for ns in (1000, 1100, 900, 1000, 1000)]
    summary = summarize([rounds])
    assert summary.jmh_score_ns == 100
    # s = sqrt(0.005 * 10^4) ~ 7.071 ns; t(0.9995, 4) = 8.610; error = 8.610 * 7.071 / sqrt(5)
    assert summary.jmh_error_ns == pytest.approx(8.610 * 7.0711 / 5 ** 0.5, rel=1e-3)


def test_a_warm_up_that_ran_out_is_counted_in_forks_not_summed_into_one_long_warm_up():
    from jvmbridge.forks.measure import merge_warmups
    from jvmbridge.results import Measurement, NoteKind
    from jvmbridge.stats.summary import summarize

    forks = [{"iterations": 10, "seconds": 3.0, "steady": True, "ns_per_op": 50.0},
             {"iterations": 10, "seconds": 10.0, "steady": False, "ns_per_op": 51.0},
             {"iterations": 10, "seconds": 4.0, "steady": True, "ns_per_op": 50.5}]
    measured = Measurement("JVM", "SunJCE", "intrinsics on", True, True, "UseAES=true", "aes-256-cbc", "encrypt",
                           "message", 38, summarize([[{"iterations": 1, "ns": 50.0}] * 2] * 3),
                           warmup=merge_warmups(forks))
    (note,) = [n.text for n in measured.result("").notes if n.kind is NoteKind.NOT_STEADY]
    assert note == "the warm-up ran out before the speed settled in 1 of 3 fork(s) (the longest 10.0 s)"


def test_a_row_of_two_forks_shows_their_range_and_the_total_time_that_stopped_it_short_says_so_once():
    from jvmbridge.results import Measurement, NoteKind
    from jvmbridge.stats.summary import summarize

    def row(*fork_ns: float):
        forks = [[{"iterations": 1, "ns": ns}] * 2 for ns in fork_ns]
        return Measurement("JVM", "SunJCE", "intrinsics on", True, True, "UseAES=true", "aes-256-cbc", "encrypt",
                           "message", 38, summarize(forks))

    notes = row(94, 106).result("").notes  # 2 forks: no interval, their range
    assert [n.text for n in notes if n.kind is NoteKind.FEW_SAMPLES] == [
        "only 2 fork(s): too few for a 95% interval over forks to mean anything, so none is shown; they range "
        "94.0-106.0 ns/op; 1 more fork(s) (--forks 3) would give one"]
    notes = row(100, 102.5, 97.5, 100).result("", forks_cut=3).notes
    assert [n.text for n in notes] == ["the run's --total-time stopped its job 3 fork(s) short of what its stopping "
                                       "rule wanted"]
    assert "--total-time" in notes[0].kind.hint


@pytest.mark.parametrize("mode", ["cbc", "ctr", "gcm", "cfb"])
@pytest.mark.parametrize("size", [0, 15, 38, 4096])
def test_pyca_decrypt_inverts_encrypt(mode, size):
    from jvmbridge.reference import decrypt_message, encrypt_message
    from jvmbridge.sampling.workload import Operation

    w = Operation(message_bytes=size, mode=mode)
    assert decrypt_message(w.key, w.iv, encrypt_message(w.key, w.iv, w.plaintext, mode), mode) == w.plaintext


def test_copies_in_processes_each_run_the_full_count_at_once():
    import multiprocessing
    import time

    from jvmbridge.forks.measure import in_processes

    done = multiprocessing.get_context("fork").Value("i", 0)

    def loop(n: int) -> int:
        started = time.perf_counter_ns()
        for _ in range(n):
            with done.get_lock():
                done.value += 1
        return time.perf_counter_ns() - started

    with in_processes(loop, 3) as together:
        assert together(100) > 0
        assert together(50) > 0
    assert done.value == 3 * (100 + 50)


def test_a_failing_copy_raises_instead_of_hanging():
    from jvmbridge.forks.measure import in_processes

    def broken(n: int) -> int:
        raise ValueError("no such mode")

    with in_processes(broken, 2) as together:
        with pytest.raises(RuntimeError, match="ValueError: no such mode"):
            together(1)


def test_more_forks_only_when_the_work_is_not_fixed():
    from jvmbridge.sampling.policy import FORK_LIMIT, Sampling

    assert Sampling().fork_limit == FORK_LIMIT  # timed rounds: more forks while the interval is wide
    assert Sampling(iterations=10**8, forks=1).fork_limit == 1  # AESNITester's fixed work
    assert Sampling(iterations=10**8, forks=1, max_forks=4).fork_limit == 4


@pytest.mark.parametrize("gc_ms, jit_ms, noted", [(5, 0, False), (25, 0, True), (0, 3, True)])
def test_gc_and_jit_work_inside_the_timed_rounds_is_noted_when_it_matters(gc_ms, jit_ms, noted):
    from jvmbridge.results import Measurement, NoteKind
    from jvmbridge.stats.summary import summarize

    # Two rounds of 1 s each (10^7 messages of 100 ns): 1% of that is 20 ms.
    summary = summarize([[{"iterations": 10**7, "ns": 10**9}] * 2])
    measurement = Measurement("JVM", "SunJCE", "intrinsics on", True, True, "UseAES=true", "aes-256-cbc", "encrypt",
                              "message", 38, summary, busy={"gc_ms": gc_ms, "jit_ms": jit_ms})
    busy = [n for n in measurement.result("").notes if n.kind is NoteKind.BUSY]
    assert bool(busy) == noted
    if noted:
        assert busy[0].text == (f"during the timed rounds GC took {gc_ms} ms ({gc_ms / 2000:.1%}) "
                                f"and the JIT compiled for {jit_ms} ms")


@pytest.mark.parametrize("flag_line, fix", [
    ("bool UseAESCTRIntrinsics = false {diagnostic} {default}",
     "off by default in this JDK: add -XX:+UnlockDiagnosticVMOptions -XX:+UseAESCTRIntrinsics"),
    ("bool UseAESCTRIntrinsics = false {diagnostic} {environment}",
     "remove -XX:-UseAESCTRIntrinsics from JAVA_TOOL_OPTIONS or _JAVA_OPTIONS"),
    ("bool UseAESCTRIntrinsics = false {diagnostic} {ergonomic}", "HotSpot turned UseAESCTRIntrinsics off itself"),
])
def test_a_disabled_verdict_says_how_to_turn_it_back_on(flag_line, fix):
    # Older aarch64 JDKs shipped the CTR intrinsic off by default: the fix is to switch it on.
    from jvmbridge.intrinsics.modes import MODES
    from jvmbridge.intrinsics.verdict import Status, decide
    from jvmbridge.jvm.printflags import parse

    table = parse(f"bool UseAES = true {{product}} {{default}}\n{flag_line}\n")
    verdict = decide(MODES["ctr"], 17, ["aes"], table, None)
    assert verdict.status == Status.DISABLED and verdict.fix.startswith(fix)


def test_openssl_speed_runs_in_slices_only_where_a_slice_can_time_it():
    from jvmbridge.engines import ENGINES, Matrix
    from jvmbridge.sampling.workload import Operation, Workload

    speed = ENGINES["openssl-cli"]

    def sliced(size: int = 16, iterations: int | None = None, args: tuple[str, ...] = ()) -> list:
        workload = Workload(operation=Operation(message_bytes=size, shape="stream"), sampling=Sampling(iterations=iterations))
        return speed.sliced([(workload, "")], Matrix(openssl="openssl", openssl_args=args))

    assert [s.accelerated for s in sliced()] == [True, False]  # AES-NI on and off, two workers
    def whole(*args, **kwargs) -> bool:
        return all(s.whole_runs for s in sliced(*args, **kwargs))

    # Else whole runs, each its own process for whole seconds, in the turns schedule:
    assert not whole(16384) and whole(16385)  # the operation under way at the signal is counted whole
    assert whole(iterations=10**6)  # it counts what it did: not a given count
    assert whole(args=("-multi", "2"))  # -multi's parent has no alarm to stop its children
    assert sliced(16385)[0].request["parts"][0]["whole_seconds"] == 1
    assert sliced(args=("-provider", "default"))[0].request["parts"][0]["extra"] == ["-provider", "default"]


def test_the_host_speeds_interval_below_one_percent_is_not_shown_as_zero():
    from jvmbridge.comparison.hostspeed import describe, plus_minus

    assert (plus_minus(0.0012), plus_minus(0.03)) == ("±0.1%", "±3%")
    assert describe({"speed": 0.95, "relative_error": 0.0012}).endswith("0.95 of its best speed during this run (±0.1%)")


def test_a_warm_up_waited_on_by_other_work_settles_by_its_cpu_time_and_one_run_elsewhere_does_not():
    from jvmbridge.forks.measure import warm_up

    waits = itertools.cycle([0.0, 3.0, 1.5])  # every few chunks one waits three times as long as it runs

    def run(n: int) -> int:  # the same work per operation; its wall time as if queued behind other work
        started, cpu = time.perf_counter_ns(), time.thread_time_ns()
        sum(i * i for i in range(20 * n))
        return time.perf_counter_ns() - started + round((time.thread_time_ns() - cpu) * next(waits))

    here = warm_up(run, 0.1, 3.0, tolerance=0.25, in_this_thread=True)
    assert here.steady and here.ns_per_op <= here.chunks[-1], here  # sized from the fastest recent chunk
    elsewhere = warm_up(run, 0.1, 0.5, tolerance=0.25)  # as loops on other threads: their wall time
    assert not elsewhere.steady and elsewhere.seconds >= 0.5


# Serial: the loop not watched must settle while the touching lasts; beside another test it did not.
# The touching lasts a second, not 0.4 s: alone, a host's moment once held the loop 0.55 s.
@pytest.mark.serial
def test_a_warm_up_watching_fresh_memory_lasts_while_its_process_touches_it():
    """As a JVM's loop allocating into a heap no collection has passed over: its speed looks settled,
    but each fresh page still costs it a fault. A loop not watched so (native ones: their allocations
    per call are their steady state) is not held."""
    from jvmbridge.forks.measure import fresh_memory, warm_up

    def touching(seconds: float):
        fresh, touched, until = mmap.mmap(-1, 256 << 20), 0, time.perf_counter() + seconds
        fresh.madvise(mmap.MADV_NOHUGEPAGE)  # a 4 KiB page a touch, as a heap's where huge pages are off

        def run(n: int) -> int:
            nonlocal touched
            started = time.perf_counter_ns()
            for _ in range(n):
                sum(i * i for i in range(1000))
                if time.perf_counter() < until and touched < len(fresh):
                    fresh[touched] = 1  # a page's first touch: a minor fault
                    touched += mmap.PAGESIZE
            return time.perf_counter_ns() - started

        return fresh, run

    fresh, run = touching(1.0)
    with fresh:
        watched = warm_up(run, 0.1, 3.0, activity=fresh_memory(), tolerance=0.25, in_this_thread=True)
    assert watched.steady and watched.seconds >= 1.0, watched
    fresh, run = touching(1.0)
    with fresh:
        unwatched = warm_up(run, 0.1, 3.0, tolerance=0.25, in_this_thread=True)
    assert unwatched.steady and unwatched.seconds < 1.0, unwatched
