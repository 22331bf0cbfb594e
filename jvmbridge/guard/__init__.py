"""The guard: a -javaagent proving inside a server's JVM, after its JIT, that its AES is right."""
