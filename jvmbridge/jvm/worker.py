"""Worker process for the conductor: one JPype JVM with one setting's flags, its parts timed in slices."""
from __future__ import annotations

from collections.abc import Callable
from typing import cast

from jvmbridge.conductor.slices import Loop, Opened, refused, serve
from jvmbridge.forks.measure import fresh_memory
from jvmbridge.forks.parent import WorkerError
from jvmbridge.forks.protocol import JvmPart, JvmRequest
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.jvm import messages
from jvmbridge.jvm.optionfiles import admitted_options


def _admitted(options: list[str]) -> list[str]:
    """``options`` as the JVM gets them: crash files as they are, the rest admitted (jvm.optionfiles)."""
    try:
        own = messages.crash_file_options()
    except HarnessUnavailable as e:
        raise WorkerError(str(e)) from None
    admitted = iter(admitted_options([option for option in options if option not in own]))
    return [option if option in own else next(admitted) for option in options]


def _start_jvm(request: JvmRequest):
    import jpype

    try:
        jpype.startJVM(request["libjvm"], *_admitted(request["options"]),
                       classpath=request["classpath"], convertStrings=False)
    except (RuntimeError, OSError) as e:
        # The JVM's reason is on stderr, which the parent reads; JPype only says "Unable to start JVM".
        raise WorkerError(f"JVM did not start: {e}") from None
    return jpype


def _read_flags(jpype, names: list[str]) -> dict[str, dict]:
    """Each flag's value and origin as the running JVM reports them; absent flags are left out."""
    management = jpype.JClass("java.lang.management.ManagementFactory")
    diagnostic = jpype.JClass("com.sun.management.HotSpotDiagnosticMXBean")
    bean = management.getPlatformMXBean(diagnostic)
    flags = {}
    for name in names:
        try:
            option = bean.getVMOption(name)
        except jpype.JException:  # IllegalArgumentException: this JVM has no such flag
            continue
        flags[name] = {"value": str(option.getValue()), "origin": str(option.getOrigin())}
    return flags


def _install_provider(jpype, harness_class, request: JvmRequest) -> str:
    """Register the classpath provider; its name, or WorkerError saying why it cannot load."""
    class_name = request["provider_class"]
    try:
        return str(harness_class.installProvider(class_name))
    except jpype.JException as e:
        cause = e
        while cause.getCause() is not None:  # reflection wraps the provider's own exception
            cause = cause.getCause()
        if isinstance(cause, jpype.JClass("java.lang.ClassNotFoundException")):
            source = request["provider_source"]
            raise WorkerError(f"{class_name} is not on the classpath: {f'get {source} and ' if source else ''}"
                              "pass its jar with --classpath") from None
        raise WorkerError(f"{class_name} cannot load here: {cause}") from None


def _jvm_identity(jpype, collectors: list) -> dict:
    """Its version, and the collector and processors it chose from what it saw."""
    system = jpype.JClass("java.lang.System")
    props = ("java.vm.vendor", "java.vm.name", "java.runtime.version", "java.home", "os.arch")
    return {**{name: str(system.getProperty(name)) for name in props},
            "collectors": ", ".join(str(collector.getName()) for collector in collectors),
            "processors": int(jpype.JClass("java.lang.Runtime").getRuntime().availableProcessors())}


def _loop(jpype, harness_class, copies: list, stream: bool):
    """(the Java object whose sink() holds results, its timed loop), threads started together."""
    if len(copies) == 1:
        (harness,) = copies
        return harness, harness.runStream if stream else harness.run
    parallel = jpype.JClass("jvmbridge.harness.ParallelHarness")(jpype.JArray(harness_class)(copies), stream)
    return parallel, parallel.run


def _after_loop(harness, request: JvmPart) -> dict:
    """The bytes the JIT-compiled code gave after the timed rounds, for the parent to check."""
    if request["shape"] == "stream":
        updates = stream_check_updates(len(bytes.fromhex(request["plaintext"])))
        output = bytes(harness.streamOutput(updates))
        return {"stream": output.hex(), "updates": updates, "iv": bytes(harness.iv()).hex()}
    return {"message": bytes(harness.lastOutput()).hex(), "iv": bytes(harness.iv()).hex()}


def stream_check_updates(message_bytes: int) -> int:
    """Enough updates to cover 64 KiB (at least 64 calls, at most 4096)."""
    return max(64, min(4096, 65536 // max(message_bytes, 1)))


# JPype's "Python Reference Queue" thread (15 characters in /proc): the harness's, not the measured
# code's; left free it ran on the measuring vCPU most of any thread but the loops (a scheduler trace).
HARNESS_THREADS = ("Python Referenc",)


def open_loops(request: dict) -> Opened:
    jvm = Jvm(cast(JvmRequest, request))  # as engines.jvm wrote it
    return {"jvm": jvm.identity, "flags": jvm.flags}, [_part_loop(jvm, cast(JvmPart, part)) for part in request["parts"]]


def _part_loop(jvm: Jvm, part: JvmPart) -> Loop:
    """``part``'s loop, or where its cipher refused the work, a part that fails alone."""
    try:
        return jvm.loop(part)
    except WorkerError as e:
        return refused(e)


class Jvm:
    """The JVM this process started: its flags, the provider, and its GC and JIT counters."""

    def __init__(self, request: JvmRequest):
        self.jpype = jpype = _start_jvm(request)
        self.flags = _read_flags(jpype, request["read_flags"])
        management = jpype.JClass("java.lang.management.ManagementFactory")
        compiler, collectors = management.getCompilationMXBean(), list(management.getGarbageCollectorMXBeans())
        self.identity = _jvm_identity(jpype, collectors)
        self.harness_class = jpype.JClass("jvmbridge.harness.AesHarness")
        self.provider = _install_provider(jpype, self.harness_class, request) if request["provider_class"] else ""

        def jit_milliseconds() -> int:
            return int(compiler.getTotalCompilationTime())

        def gc_milliseconds() -> int:  # pauses and, for concurrent collectors, their cycles
            return sum(int(collector.getCollectionTime()) for collector in collectors)

        # The JIT's and the heap's: a warm-up ends once neither changes what the loop runs.
        jit, heap = _jit_activity(jpype, jit_milliseconds), fresh_memory()
        self.activity = lambda: jit() + heap()
        self.counters = {"gc_ms": gc_milliseconds, "jit_ms": jit_milliseconds}

    def loop(self, part: JvmPart) -> Loop:
        """``part``'s harness loop and its evidence; a Java exception fails this part alone."""
        try:
            return self._loop(part)
        except self.jpype.JException as e:
            raise WorkerError(_refused(part["transformation"], e)) from None

    def _loop(self, part: JvmPart) -> Loop:
        jpype, harness_class, provider = self.jpype, self.harness_class, self.provider
        key, iv, plaintext = (jpype.JArray(jpype.JByte)(bytes.fromhex(part[k])) for k in ("key", "iv", "plaintext"))
        transformation = part["transformation"]
        decrypt = part["direction"] == "decrypt"
        try:
            harness = harness_class(transformation, provider, decrypt, key, iv, plaintext)
        except jpype.JClass("java.security.NoSuchAlgorithmException"):
            raise WorkerError(f"{provider or 'the default provider'} does not offer {transformation}") from None
        reference = {}  # the provider's own ciphertext, before the loop ran

        def prepare() -> None:
            try:
                if decrypt and bytes(harness.once()) != bytes.fromhex(part["plaintext"]):
                    raise WorkerError(f"{transformation} decryption did not give the plaintext back")
                reference["ciphertext"] = bytes(harness_class.encrypt(transformation, provider, key, iv,
                                                                      plaintext)).hex()
            except jpype.JException as e:
                raise WorkerError(_refused(transformation, e)) from None

        # One cipher per thread: a Cipher is not thread-safe.
        copies = [harness] + [harness_class(transformation, provider, decrypt, key, iv, plaintext)
                              for _ in range(part["threads"] - 1)]
        measured, java_loop = _loop(jpype, harness_class, copies, part["shape"] == "stream")
        unsupported = jpype.JClass("java.lang.UnsupportedOperationException")

        def run(n: int) -> int:
            try:
                return int(java_loop(n))
            except unsupported as e:
                raise WorkerError(str(e.getMessage())) from None
            except jpype.JException as e:
                raise WorkerError(_refused(transformation, e)) from None

        def evidence() -> dict:
            return {"after_loop": _after_loop(harness, part), "provider": str(harness.providerDescription()),
                    "transformation": transformation, "ciphertext": reference.get("ciphertext", ""),  # "": never run
                    "sink": int(measured.sink())}

        return Loop(run=run, evidence=evidence, activity=self.activity, counters=self.counters,
                    copies=part["threads"], prepare=prepare)


def _refused(transformation: str, exception) -> str:
    """One line for a Java exception from a part's cipher ("AES/GCM/NoPadding failed in the JVM: ...")."""
    return f"{transformation} failed in the JVM: {exception.getClass().getSimpleName()}: {exception.getMessage()}"


def _jit_activity(jpype, jit_milliseconds: Callable[[], int]) -> Callable[[], int]:
    """A counter moving while the JIT still changes code: compile time plus one per reading with a
    compile queued. Compile time alone stands still through a long C2 compile, and warm-up took C1's
    code for steady (first 50 ms slices ran 10-35% slow). Not HotSpot: compile time alone."""
    management = jpype.JClass("java.lang.management.ManagementFactory")
    name = jpype.JClass("javax.management.ObjectName")("com.sun.management:type=DiagnosticCommand")
    server = management.getPlatformMBeanServer()
    if not server.isRegistered(name):
        return jit_milliseconds
    arguments, signature = jpype.JArray(jpype.JObject)([None]), jpype.JArray(jpype.JString)(["[Ljava.lang.String;"])
    busy = 0

    def activity() -> int:
        nonlocal busy
        busy += compiling(str(server.invoke(name, "compilerQueue", arguments, signature)))
        return jit_milliseconds() + busy

    return activity


def compiling(queue: str) -> bool:
    """Whether `Compiler.queue`'s text lists a compile, beyond its headings and "Empty"."""
    return any(line.strip() and not line.strip().endswith(":") and line.strip() != "Empty"
               for line in queue.splitlines())


if __name__ == "__main__":
    serve(open_loops, HARNESS_THREADS)
