"""What `check` and `verify` share about the JVM's AES intrinsics."""
