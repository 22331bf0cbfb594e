"""`jvmbridge compare` end to end: real JVMs through JPype, real OpenSSL, the real CLI."""
from __future__ import annotations

import json
import math
import os
import statistics

import pytest
from helpers import jdk_homes, notes_of, rounds_per_fork, run_cli, run_cli_here, run_json, stale_jvm_files, upper_bound

from jvmbridge.saved.schema import SCHEMA_VERSION
from jvmbridge.stats.summary import t_quantile

# For tests of what a row says (its JDK, its flags read back), not of its statistics: the last --forks and
# --rounds count. One round: no such test reads a row's rounds (openssl speed's are a whole run of 1 s anyway).
ONE_FORK = ("--forks", "1", "--max-forks", "1", "--rounds", "1")


# The engines and shape these tests read, each configuration's forks on its own (quick's --no-interleave).
EVERY_ENGINE = ("--engine", "jvm", "--engine", "c-loop", "--engine", "pyca", "--engine", "openssl-cli")


@pytest.fixture(scope="module")
def shared_run(quick):
    """The run the serial tests below read (serial: its first user times it alone), and what its JVMs
    left in /tmp (every JVM's files there, read before and after it, while no other test runs)."""
    before = stale_jvm_files()
    done, data = run_json("compare", *quick, *EVERY_ENGINE)
    assert done.returncode == 0, done.stderr
    return data, stale_jvm_files() - before


@pytest.fixture(scope="module")
def report(shared_run):
    return shared_run[0]


def rows(data, engine_prefix):
    return [r for r in data["results"] if r["engine"].startswith(engine_prefix)]


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_report_is_versioned_and_names_units(report):
    assert report["schema_version"] == SCHEMA_VERSION
    assert "10^6 bytes" in report["units"]["mb_per_s"]
    assert report["metadata"]["workload"]["cipher"] == "aes-256-cbc"
    assert report["metadata"]["workload"]["message_bytes"] == 38
    assert report["failures"] == []


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_jvm_rows_show_flags_read_back_from_the_running_jvm(report):
    on, off = rows(report, "JVM")
    assert (on["setting"], off["setting"]) == ("intrinsics on", "intrinsics off")
    assert "UseAESIntrinsics=true" in on["verified_state"]
    assert "UseAES=false" in off["verified_state"] and "UseAESIntrinsics=false" in off["verified_state"]
    # -UseAES leaves GHASH intrinsics on: read back, and said where it matters (GCM, not this CBC run).
    assert "UseGHASHIntrinsics=true" in off["verified_state"]
    assert "UseGHASHIntrinsics stays on" not in notes_of(off)
    assert on["as_requested"] and off["as_requested"]
    assert "-XX:+UnlockDiagnosticVMOptions -XX:-UseAES -XX:-UseAESIntrinsics" in off["details"]["jvm_options"]


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_rounds_are_sized_from_the_warm_up_to_last_the_round_time(report):
    assert report["metadata"]["workload"]["budget"] == ("3 rounds of 0.1 s per fork, 2 fork(s); "
                                                        "OpenSSL speed (C loop): a run of 1 s per fork, 2 fork(s)")
    for row in report["results"]:
        if row["engine"].startswith("OpenSSL speed"):  # runs of whole seconds, each a process: a fork of one round
            assert row["forks"] == row["rounds"] == len(row["round_ns_per_op"]) == 2
            assert row["rsd"] is None  # no fork has two rounds: no spread inside one was measured
        else:
            # 3 rounds a fork, and as many more as replaced disturbed ones (at most 3)
            assert row["forks"] == 2 and sum(rounds_per_fork(row, 3)) == row["rounds"] == len(row["round_ns_per_op"])
            for per_op, messages in zip(row["round_ns_per_op"], row["round_iterations"]):
                assert 0.03 < per_op * messages / 1e9 < 0.3, row  # sized from a 50 ms warm-up chunk's speed
        assert row["ciphertext_ok"] in (True, None)


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_every_figure_has_a_confidence_interval(report):
    for row in report["results"]:
        forks = row["fork_ns_per_op"]
        # A fork whose every round other work disturbed has no summary (the host steals on some machines);
        # every fork so: one, of the least disturbed rounds (stats.summary.summarize).
        emptied = {fork for fork in range(row["forks"])
                   if all(why for why, f in zip(row["round_set_aside"], row["round_fork"]) if f == fork)}
        assert row["confidence"] == 0.95 and len(forks) == (row["forks"] - len(emptied) or 1)
        if len(forks) < 2:
            assert row["ns_per_op_error"] is None
            continue
        # The figure and its interval over forks, by their formulas (a bound on its size failed when
        # the machine was busy: two forks 2.5x apart give t(0.975, 1) = 12.7 times their spread).
        assert row["ns_per_op"] == pytest.approx(statistics.fmean(forks))
        assert 0 < row["ns_per_op_error"] == pytest.approx(
            t_quantile(0.975, len(forks) - 1) * statistics.stdev(forks) / math.sqrt(len(forks)))
        # JMH's pooled figure beside, by JMH's formula over every round (with 2 rounds t(0.9995, 1) is
        # 636.6: wide, not wrong)
        every = row["round_ns_per_op"]
        assert row["jmh_score"] == pytest.approx(statistics.fmean(every))
        assert row["jmh_error"] == pytest.approx(
            t_quantile(0.9995, len(every) - 1) * statistics.stdev(every) / math.sqrt(len(every)))
        assert row["ns_per_op_min"] <= row["ns_per_op"] <= row["ns_per_op_max"]


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_native_rows_prove_the_aesni_mask_took_effect(report):
    for engine in ("OpenSSL C loop", "OpenSSL via pyca", "OpenSSL speed"):
        on, off = rows(report, engine)
        assert on["accelerated"] and not off["accelerated"]
        assert on["verified_state"].startswith("AES-NI used")
        assert off["verified_state"].startswith("AES-NI unused")
        assert on["as_requested"] and off["as_requested"]


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_units_agree(report):
    for row in report["results"]:
        assert row["ops_per_s"] == pytest.approx(1e9 / row["ns_per_op"])
        assert row["mb_per_s"] == pytest.approx(row["ops_per_s"] * 38 / 1e6)
        assert row["openssl_kbytes_per_s"] == pytest.approx(row["mb_per_s"] * 1000)


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_python_loop_is_labelled_as_overhead_dominated(report):
    pyca_on = report["results"].index(rows(report, "OpenSSL via pyca")[0])
    (finding,) = [f for f in report["findings"] if f["row"] == pyca_on + 1]
    assert finding["kind"] == "python-overhead" and finding["text"].startswith("dominated by Python overhead")


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_ratios_cover_intrinsics_aesni_and_jvm_against_native(report):
    labels = [r["label"] for r in report["ratios"]]
    assert any(label.startswith("intrinsics speedup") for label in labels)
    assert any(label.startswith("AES-NI speedup, openssl speed") for label in labels)
    assert sum("acceleration" in label for label in labels) == 2
    # The JVM is held against the same per-message work in C, like with like: no shape note.
    assert all(label.startswith("JVM vs OpenSSL C loop,") and "against" not in label
               for label in labels if "acceleration" in label)
    for ratio in report["ratios"]:
        assert ratio["low"] <= ratio["times"] <= upper_bound(ratio)
    (intrinsics,) = [r for r in report["ratios"] if r["label"].startswith("intrinsics speedup")]
    assert intrinsics["times"] > 2, intrinsics  # a several-fold effect
    # Significant exactly when its interval leaves out 1. (Two forks of 0.3 s can disagree enough on
    # this shared machine for even a several-fold effect to be "not significant": that is said, not hidden.)
    assert intrinsics["significant"] == (intrinsics["low"] > 1 or upper_bound(intrinsics) < 1), intrinsics


@pytest.fixture(scope="module")
def jvm_run_with_a_diagnostic_flag(quick, tmp_path_factory):
    """One JVM run, AES-128, with a diagnostic flag, from a shell that sets JVM options: its table on
    stdout, its data exported beside and saved as the run's file."""
    folder = tmp_path_factory.mktemp("diagnostic")
    # Each would change every measured JVM: the heap and, worse, the intrinsic itself.
    env = {**os.environ, "JAVA_TOOL_OPTIONS": "-XX:+UnlockDiagnosticVMOptions -XX:-UseAESIntrinsics",
           "_JAVA_OPTIONS": "-Xmx64m"}
    done = run_cli("compare", *quick, *ONE_FORK, "--engine", "jvm", "--key-bits", "128",
                   "--jvm-arg=-XX:-UseAESCTRIntrinsics", "--export-json", str(folder / "run.json"),
                   "--output", str(folder / "run.jsonl"), env=env)
    assert done.returncode == 0, done.stderr
    return done, json.loads((folder / "run.json").read_text()), folder / "run.jsonl"


def test_table_output_lists_every_configuration_with_its_state(jvm_run_with_a_diagnostic_flag):
    done, _, _ = jvm_run_with_a_diagnostic_flag
    assert "AES-128-CBC" in done.stdout
    assert "intrinsics on" in done.stdout and "intrinsics off" in done.stdout
    assert "-UseAESIntrinsics" in done.stdout  # the flags read back, as HotSpot writes them
    assert "= OpenSSL" in done.stdout


def test_csv_output_is_the_dataframe(quick):
    done = run_cli("compare", *quick, *ONE_FORK, "--engine", "pyca", "--format", "csv")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0].split(",")
    assert {"engine", "setting", "ns_per_op", "mb_per_s", "verified_state"} <= set(header)
    assert len(done.stdout.splitlines()) == 3


@pytest.mark.skipif(len(jdk_homes()) < 2, reason="needs a second JDK")
def test_two_jdks_side_by_side(quick):
    homes = jdk_homes()[:2]
    done, data = run_json("compare", *quick, *ONE_FORK, "--engine", "jvm", "--java", str(homes[0]), "--java", str(homes[1]))
    assert done.returncode == 0, done.stderr
    assert sorted({r["details"]["java_home"] for r in data["results"]}) == sorted(str(h) for h in homes)
    assert sum(r["label"].startswith("intrinsics speedup") for r in data["ratios"]) == 2


def test_diagnostic_flag_gets_the_unlock_and_is_read_back(jvm_run_with_a_diagnostic_flag):
    _, data, _ = jvm_run_with_a_diagnostic_flag
    assert len(data["results"]) == 2
    for row in data["results"]:
        assert "UseAESCTRIntrinsics=false" in row["verified_state"]
        assert row["as_requested"]


def test_a_flag_the_jvm_overrides_is_reported_not_hidden(quick):
    # Intrinsics cannot be on without UseAES: the "off" row asked for them and did not get them.
    done, data = run_json("compare", *quick, *ONE_FORK, "--engine", "jvm", "--jvm-arg=-XX:+UseAESIntrinsics")
    assert done.returncode == 0, done.stderr
    on, off = data["results"]
    assert on["as_requested"]
    assert not off["as_requested"]
    assert "UseAESIntrinsics requested true, JVM runs false" in notes_of(off)
    assert "AES intrinsics require UseAES" in notes_of(off)


def test_python_api_returns_a_dataframe():
    import jvmbridge

    # The C loop: the API hands any engine to the runner the CLI uses (whose JVM rows the tests above read),
    # and two forks of it take seconds where a JVM's take ten each.
    frame = jvmbridge.compare("1e5", rounds=2, max_forks=2, engine="c-loop", shape="message", interleave=False)
    assert list(frame.setting) == ["AES-NI on", "AES-NI off"]
    assert frame.attrs["metadata"]["workload"]["iterations"] == 100_000
    assert list(frame.iterations) == [100_000] * 2  # the run's work: exactly, shared among the 2 forks
    assert frame.ns_per_op.gt(0).all()


def test_third_party_providers_beside_sunjce(quick):
    from helpers import provider_jar

    jars = f"{provider_jar('bcprov')}:{provider_jar('AmazonCorrettoCryptoProvider')}"
    done, data = run_json("compare", *quick, *ONE_FORK, "--engine", "jvm", "--provider", "SunJCE", "--provider", "BC",
                          "--provider", "ACCP", "--classpath", jars)
    assert done.returncode == 0, done.stderr
    by_provider = {}
    for row in data["results"]:
        by_provider.setdefault(row["details"]["provider"], []).append(row)
        assert row["ciphertext_ok"] is True
    assert [r["setting"] for r in by_provider["SunJCE"]] == ["intrinsics on", "intrinsics off"]
    (bc,) = by_provider["BC"]
    assert bc["implementation"].startswith("BC 1.") and not bc["accelerated"]
    (accp,) = by_provider["ACCP"]
    assert accp["implementation"].startswith("AmazonCorrettoCryptoProvider ")


def test_a_missing_provider_fails_alone(quick):
    done, data = run_json("compare", *quick, *ONE_FORK, "--engine", "jvm", "--provider", "SunJCE", "--provider", "BC")
    assert done.returncode == 1
    assert [r["details"]["provider"] for r in data["results"]] == ["SunJCE", "SunJCE"]
    assert "BouncyCastleProvider is not on the classpath" in done.stderr
    assert len(data["failures"]) == 1


@pytest.mark.serial  # MB/s at two sizes compared
def test_a_size_sweep_in_one_run_with_a_shared_jvm():
    done, data = run_json("compare", "--engine", "jvm", "--engine", "openssl-cli", "--message-size", "16,1024",
                          "--iterations", "1e5", "--rounds", "2", "--forks", "1", "--max-forks", "1", "--quiet",
                          "--shared-jvm", "--no-interleave", "--shape", "message")
    assert done.returncode == 0, done.stderr
    assert data["metadata"]["workload"]["sizes"] == [16, 1024]
    assert data["metadata"]["jit_shared_by"] == 2  # each fork's JVM measured both sizes
    by_size = {}
    for row in data["results"]:
        if row["engine"] == "JVM":  # --iterations: exactly that many messages, as AESNITester
            assert (row["iterations"], row["rounds"]) == (100_000, 2)
        by_size.setdefault(row["message_bytes"], []).append(row["setting"])
        assert row["ciphertext_ok"] in (True, None)
    assert by_size == {16: ["intrinsics on", "intrinsics off", "AES-NI on", "AES-NI off"],
                       1024: ["intrinsics on", "intrinsics off", "AES-NI on", "AES-NI off"]}
    speedups = [r["label"] for r in data["ratios"] if r["label"].startswith("intrinsics speedup")]
    assert [label.rsplit(", ", 1)[1] for label in speedups] == ["16 B", "1024 B"]
    # Bigger messages amortise the per-message cost: more MB/s at 1024 B than at 16 B.
    on = {r["message_bytes"]: r["mb_per_s"] for r in data["results"] if r["setting"] == "AES-NI on"}
    assert on[1024] > on[16]


def test_openssl_arguments_reach_openssl_speed():
    done, data = run_json("compare", "--no-interleave", "--shape", "message", "--engine", "openssl-cli", "--rounds", "2", "--forks", "1", "--max-forks", "1",
                          "--quiet", "--openssl-arg=-provider", "--openssl-arg=default")
    assert done.returncode == 0, done.stderr
    assert all("-provider default -evp aes-256-cbc" in r["details"]["command"] for r in data["results"])
    refused = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "openssl-cli", "--rounds", "1", "--forks", "1", "--max-forks", "1",
                      "--quiet", "--openssl-arg=-provider", "--openssl-arg=no-such-provider")
    assert refused.returncode == 1 and "openssl speed gave no result" in refused.stderr


def test_message_and_stream_shapes_side_by_side():
    # One JVM per setting measures both shapes (--shared-jvm); a JVM for each is test_interleaved's default run.
    done, data = run_json("compare", "--no-interleave", "--engine", "jvm", "--engine", "pyca", "--engine", "openssl-cli",
                          "--shape", "message", "--shape", "stream", "--shared-jvm", "--round-time", "0.05",
                          "--rounds", "1", "--forks", "1", "--max-forks", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    shapes = {(r["engine"], r["setting"], r["shape"]) for r in data["results"]}
    for engine, on in (("JVM", "intrinsics on"), ("OpenSSL via pyca (Python loop)", "AES-NI on")):
        assert {(engine, on, "message"), (engine, on, "stream")} <= shapes
    # openssl speed has only the stream shape: measured once, not once per shape.
    assert sum(r["engine"].startswith("OpenSSL speed") for r in data["results"]) == 2
    labels = [r["label"] for r in data["ratios"]]
    assert any(label.endswith("message shape") for label in labels)
    assert any(label.endswith("stream shape") for label in labels)


def test_ciphers_by_openssl_names_run_identically_on_both_sides():
    # One JVM per setting measures the three ciphers (--shared-jvm): each is its own part, its bytes checked.
    done, data = run_json("compare", "--no-interleave", "--shape", "message", "--cipher", "aes-128-gcm",
                          "--cipher", "aes-256-ctr", "--cipher", "aes-192-cfb", "--shared-jvm",
                          "--engine", "jvm", "--engine", "pyca", "--engine", "openssl-cli",
                          "--round-time", "0.05", "--rounds", "1", "--forks", "1", "--max-forks", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    ciphers = {r["cipher"] for r in data["results"]}
    assert ciphers == {"aes-128-gcm", "aes-256-ctr", "aes-192-cfb"}
    for row in data["results"]:
        assert row["ciphertext_ok"] in (True, None), row  # JVM and pyca rows equal OpenSSL's bytes
        if row["engine"].startswith("OpenSSL speed"):
            assert f"-evp {row['cipher']}" in row["details"]["command"]
    assert any(r["label"].endswith(", aes-128-gcm") for r in data["ratios"])
    gcm_off = next(r for r in data["results"] if r["engine"] == "JVM" and r["cipher"] == "aes-128-gcm"
                   and not r["accelerated"])
    assert any(n["text"].startswith("UseGHASHIntrinsics stays on with -UseAES: GCM") for n in gcm_off["notes"])


def test_cipher_and_key_bits_together_or_unknown_cipher_are_usage_errors():
    # Refused before anything runs: asked of the CLI's entry point in this process, as test_bad_input does.
    both = run_cli_here("compare", "--cipher", "aes-128-gcm", "--key-bits", "128")
    assert both.returncode == 2 and "--key-bits" in both.stderr
    unknown = run_cli_here("compare", "--cipher", "aes-256-ocb")
    assert unknown.returncode == 2 and "aes-{128,192,256}-{cbc,ctr,gcm,cfb}" in unknown.stderr


def test_a_combination_a_provider_cannot_do_says_so(quick):
    from helpers import provider_jar

    done, data = run_json("compare", *quick, "--engine", "jvm", "--provider", "ACCP", "--cipher", "aes-256-cfb",
                          "--classpath", str(provider_jar("AmazonCorrettoCryptoProvider")))
    assert done.returncode == 1
    assert "AmazonCorrettoCryptoProvider does not offer AES/CFB/NoPadding" in done.stderr


@pytest.mark.serial  # the shared run's figures are asserted (round lengths, the speedup)
def test_ratio_labels_name_the_shape_only_when_several_were_asked_for(report):
    assert not any("shape," in r["label"] or r["label"].endswith("shape") for r in report["ratios"]
                   if r["label"].startswith("intrinsics speedup"))


def test_decryption_beside_encryption_and_what_cannot_be_measured():
    # One JVM per setting measures every direction and shape (--shared-jvm): the part that cannot run
    # fails alone, the others in that JVM still measured.
    done, data = run_json("compare", "--no-interleave", "--cipher", "aes-128-gcm", "--direction", "encrypt",
                          "--direction", "decrypt", "--shape", "message", "--shape", "stream", "--shared-jvm",
                          "--engine", "jvm", "--engine", "openssl-cli",
                          "--iterations", "1e5", "--rounds", "1", "--forks", "1", "--max-forks", "1", "--quiet")
    # The JCE holds a GCM decryption stream until doFinal: that row fails, saying why; the rest run.
    assert done.returncode == 1
    assert "a GCM decryption stream cannot be measured" in done.stderr
    failed = [f["configuration"] for f in data["failures"]]
    assert len(failed) == 2, data["failures"]
    assert all(c.endswith(", decrypt, stream") and c.startswith("JVM ") for c in failed)
    decrypting = [r for r in data["results"] if r["direction"] == "decrypt"]
    assert {(r["engine"], r["shape"]) for r in decrypting} == {("JVM", "message"), ("OpenSSL speed (C loop)", "stream")}
    encrypting = [r for r in data["results"] if r["direction"] == "encrypt"]
    assert {(r["engine"], r["shape"]) for r in encrypting} == {("JVM", "message"), ("JVM", "stream"),
                                                              ("OpenSSL speed (C loop)", "stream")}
    assert all("-decrypt -evp aes-128-gcm" in r["details"]["command"] for r in decrypting if r["engine"].startswith("OpenSSL"))


@pytest.mark.serial  # reads every JVM's files in /tmp
def test_the_jvm_forks_leave_nothing_in_tmp(shared_run):
    # Each JVM child ends with os._exit once its result is saved, which skips the JVM's own removal
    # of its perf data: jvmbridge removes it. (HotSpot's next start removes those of dead pids, so a
    # run's last fork is the one that would stay: in the shared run no other engine starts a JVM.)
    _, left = shared_run
    assert not left


def test_threads_run_loops_at_once_on_every_side(quick, tmp_path):
    # One run: its table on stdout, its data exported beside.
    done = run_cli("compare", *quick, *EVERY_ENGINE, "--threads", "2", *ONE_FORK,
                   "--export-json", str(tmp_path / "run.json"))
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["metadata"]["workload"]["threads"] == 2
    assert {r["engine"].split(" (")[0] for r in data["results"]} == {"JVM", "OpenSSL C loop", "OpenSSL via pyca",
                                                                     "OpenSSL speed"}
    for row in data["results"]:
        assert row["threads"] == 2
        assert row["ops_per_s_per_thread"] == pytest.approx(row["ops_per_s"] / 2)
        assert row["ciphertext_ok"] in (True, None)
        if row["engine"].startswith("OpenSSL speed"):
            assert "-multi 2" in row["details"]["command"]
    assert "ops/s/thread" in done.stdout and "2 loops at once" in done.stdout
    assert "OpenSSL speed (C loop): a run of 2 processes (-multi) of 1 s per fork" in data["metadata"]["workload"]["budget"]


def test_settings_in_turns_run_forks_until_their_ratio_is_narrow_enough_or_out_of_reach():
    common = ["--no-interleave", "--engine", "pyca", "--round-time", "0.05", "--rounds", "2", "--forks", "1",
              "--max-forks", "3", "--quiet", "--shape", "message"]
    done, strict = run_json("compare", *common, "--target-error", "0.001")
    assert done.returncode == 0, done.stderr
    assert strict["metadata"]["workload"]["budget"] == ("2 rounds of 0.05 s per fork, 1 to 3 forks until ±0.001% (95%) "
                                                        "for each ratio (or its levels)")
    # One fork shows no spread, so a second runs; from two, Stein's rule: t(0.975, 1) = 12.706 times
    # the spread of the two forks' AES-NI speedups (logs), squared against log(1 + target), is how
    # many forks it takes. For ±0.001% that is far more than 4 x the limit: out of reach, no third.
    for row in strict["results"]:
        # 2 rounds a fork, and as many more as replaced disturbed ones (at most 2)
        assert sum(rounds_per_fork(row, 2)) == row["rounds"] and row["in_turns"].endswith("each setting in turns")
    (ratio,) = [r for r in strict["ratios"] if r["kind"] == "speedup"]
    assert {row["forks"] for row in strict["results"]} == {2} and ratio["interleaved"]
    assert ratio["paired_turns"] == 2 and ratio["low"] < ratio["times"] / 1.00001
    # At ±99% two forks whose speedups are within about 11% of each other need no third.
    done, lax = run_json("compare", *common, "--target-error", "99")
    assert done.returncode == 0, done.stderr
    assert len({row["forks"] for row in lax["results"]}) == 1 and lax["results"][0]["forks"] in (2, 3)


@pytest.mark.serial  # two figures compared
def test_aesnitester_figure_stands_beside_the_steady_state_one():
    done, data = run_json("compare", "--engine", "jvm", "--engine", "aesnitester", "--key-bits", "128", "--no-interleave",
                          "--iterations", "1e6", "--forks", "2", "--rounds", "2", "--quiet", "--shape", "message")
    assert done.returncode == 0, done.stderr
    steady = {r["setting"]: r for r in data["results"] if r["engine"] == "JVM"}
    whole = {r["setting"]: r for r in data["results"] if r["engine"].startswith("AESNITester")}
    assert set(whole) == set(steady) == {"intrinsics on", "intrinsics off"}
    for setting, row in whole.items():
        assert row["ciphertext_ok"] and row["bytes_checked_after_loop"] and row["as_requested"]
        assert row["forks"] == row["rounds"] == 2 and row["iterations"] == 1_000_000  # half a million a fork
        # Start-up, class loading and the JIT's work are inside AESNITester's clock.
        assert row["ns_per_op"] > steady[setting]["ns_per_op"]
    assert "UseAESIntrinsics=false" in whole["intrinsics off"]["verified_state"]
    assert any(r["kind"] == "speedup" and r["label"].startswith("intrinsics speedup") for r in data["ratios"])


def test_aesnitester_runs_only_what_aesnitester_ran():
    done = run_cli("compare", "--engine", "aesnitester", "--cipher", "aes-128-ctr", "--iterations", "1e5", "--quiet")
    assert done.returncode == 1
    assert "AESNITester's loop only encrypts AES/CBC/PKCS5Padding, on one thread" in done.stderr


def test_openssl_speed_aead_is_a_further_per_message_reference_for_gcm(quick):
    done, data = run_json("compare", "--cipher", "aes-128-gcm", "--cipher", "aes-128-cbc", "--engine", "openssl-aead",
                          "--sizes", "64", *quick, *ONE_FORK)
    assert done.returncode == 0, done.stderr
    on, off = data["results"]  # GCM encryption only: CBC gets no -aead rows
    assert (on["cipher"], on["shape"], on["accelerated"], off["accelerated"]) == ("aes-128-gcm", "message", True, False)
    assert on["verified_state"].startswith("AES-NI used") and off["verified_state"].startswith("AES-NI unused")
    assert "-aead" in on["details"]["command"].split() and "13 bytes of AAD" in notes_of(on)
    assert any(r["label"].startswith("AES-NI speedup, openssl speed -aead") for r in data["ratios"])


def test_jvm_options_in_the_environment_are_left_out_of_measured_jvms_and_said_once(jvm_run_with_a_diagnostic_flag):
    done, _, saved = jvm_run_with_a_diagnostic_flag
    said = [line for line in done.stdout.splitlines() if "left out of every measured JVM" in line]
    assert said == ["Env      left out of every measured JVM: JAVA_TOOL_OPTIONS _JAVA_OPTIONS (give such options "
                    "with --jvm-arg to measure with them)"]
    assert "Picked up" not in done.stderr + done.stdout  # the JVM never saw them
    assert "+UseAESIntrinsics" in done.stdout  # the intrinsics row ran as asked, not as the shell said
    run = json.loads(saved.read_text().splitlines()[0])
    assert run["metadata"]["environment_left_out"] == ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"]  # never their values


def test_a_setting_the_users_options_contradict_is_labelled_by_what_ran_and_said_once(quick, tmp_path):
    # --jvm-arg=-XX:-UseAES turns the intrinsics off in the "intrinsics on" JVMs too. One run: its
    # table on stdout, its data exported beside.
    done = run_cli("compare", "--engine", "jvm", *quick, *ONE_FORK, "--jvm-arg=-XX:-UseAES",
                   "--export-json", str(tmp_path / "run.json"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "run.json").read_text())
    rows = result["results"]
    assert [(row["setting"], row["as_requested"]) for row in rows] == [("intrinsics off", False),
                                                                       ("intrinsics off", True)]
    assert rows[0]["details"]["requested_setting"] == "intrinsics on"
    assert "UseAES=false" in rows[0]["verified_state"]
    assert not [ratio for ratio in result["ratios"] if ratio["kind"] == "speedup"]  # off against off says nothing
    table = done.stdout
    assert table.count('asked for "intrinsics on" but ran with intrinsics off') == 1
    assert "intrinsics speedup" not in table
