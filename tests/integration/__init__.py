"""Everything not in unit/: tests that need a JVM, OpenSSL, qemu, sshd or a browser, or that take long
(`pytest -m 'not fast'`)."""
