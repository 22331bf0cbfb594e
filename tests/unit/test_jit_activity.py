"""Whether HotSpot's compile queue (`jcmd PID Compiler.queue`, the DiagnosticCommand MBean's
compilerQueue) lists a compile: the JVM warm-up's sign that the JIT still changes the code. The
texts are JDK 17's and 25's, as they printed them here."""
from jvmbridge.jvm.worker import compiling

IDLE = "Current compiles: \n\nC1 compile queue:\nEmpty\n\nC2 compile queue:\nEmpty\n\n"
RUNNING = ("Current compiles: \nC2 CompilerThread0   668   !   4       com.sun.crypto.provider.CipherCore::init "
           "(326 bytes)\n\nC1 compile queue:\nEmpty\n\nC2 compile queue:\nEmpty\n\n")
QUEUED = ("Current compiles: \n\nC1 compile queue:\nEmpty\n\nC2 compile queue:\n"
          " 604       4       java.util.ArrayList$Itr::hasNext (20 bytes)\n"
          " 615       4       java.util.ArrayList::elementData (7 bytes)\n\n")


def test_an_idle_compiler_lists_nothing():
    assert not compiling(IDLE)


def test_a_compile_running_or_waiting_is_seen():
    assert compiling(RUNNING) and compiling(QUEUED)
