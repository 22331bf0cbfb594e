"""`jvmbridge check`: the CPU, the JVM's flags, and JIT evidence, turned into a verdict per AES mode."""
