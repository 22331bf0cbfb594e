"""What `check` and `verify` share about the JVM's AES intrinsics: the modes and the intrinsics
and flags that accelerate each (modes), the compilers a JVM's flags leave (compilers: the
intrinsics are C2's), reading the JIT's inlining log (jitlog) and a running JVM's code cache
(codecache), and the verdict per mode from the CPU, the flags and that evidence (verdict)."""
