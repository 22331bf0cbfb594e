package jvmbridge.vectors;

/**
 * One known-answer AES case: a key, an IV (or nonce), GCM's additional data, a direction, the
 * input and the bytes the Cipher must give for it. Verify's harness (Conformance, whose plan
 * Python wrote with OpenSSL's answers) and the guard's SelfTest (ReferenceAes's answers) both
 * run their cases as these, each through its own call patterns.
 *
 * <p>A plain holder of bytes, with no code of its own a test proves: the guard's TestLoader leaves
 * it to the agent's loader (only SelfTest's code needs a fresh copy per test). It is in the guard's
 * agent jar and in the harness jar alike (build.gradle's guardJar; GUARD_PACKAGES in
 * jvmbridge/harness.py).
 */
public final class AesCase {
    /** The case's number in its list (verify's reports name a case by it); it seeds its call patterns' chunkings. */
    public final int id;
    public final byte[] key;
    public final byte[] iv;
    /** GCM's additional data (empty for the other modes). */
    public final byte[] aad;
    public final boolean decrypt;
    public final byte[] input;
    public final byte[] expected;

    public AesCase(int id, byte[] key, byte[] iv, byte[] aad, boolean decrypt, byte[] input, byte[] expected) {
        this.id = id;
        this.key = key;
        this.iv = iv;
        this.aad = aad;
        this.decrypt = decrypt;
        this.input = input;
        this.expected = expected;
    }
}
