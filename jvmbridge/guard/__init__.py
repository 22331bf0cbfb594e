"""The guard: a -javaagent proving, inside a server's JVM after its JIT, that its AES computes the
right bytes. Here: its state (state) and `jvmbridge guard --java`'s demonstration (demo)."""
