"""What `check` and `verify` share about the JVM's AES intrinsics: the modes and the intrinsics
and flags that accelerate each (modes), reading the JIT's inlining log (jitlog), and the verdict
per mode from the CPU, the flags and that evidence (verdict)."""
