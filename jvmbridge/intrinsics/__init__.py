"""What `check` and `verify` share about the JVM's AES intrinsics: modes, compilers, the JIT log,
the code cache, and the verdict per mode."""
