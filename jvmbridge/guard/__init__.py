"""The guard: a -javaagent (java/src/main/java/jvmbridge/guard) that proves, inside a server's own
JVM and after its JIT, that the AES it uses computes the right bytes. Here: what its state says
(state), and `jvmbridge guard --java`'s demonstration of it in a JVM of its own (demo)."""
