package jvmbridge.harness;

import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;

/**
 * The Java side of jvmbridge: an AESNITester-style {@code Cipher.doFinal} loop.
 *
 * <p>Python calls into this class once per phase (warm-up, each measured round), never per
 * iteration: a JPype call costs ~700 ns, more than the work being measured. Key, IV and plaintext
 * come from the caller so the native side can encrypt exactly the same bytes.
 */
public final class AesHarness {
    public static final String TRANSFORMATION = "AES/CBC/PKCS5Padding";

    private final Cipher cipher;
    private final byte[] plaintext;
    /** Folds every ciphertext in, so the JIT cannot prove the work unused (JMH's Blackhole idea). */
    private long sink;

    public AesHarness(byte[] key, byte[] iv, byte[] plaintext) throws GeneralSecurityException {
        this.cipher = newEncryptor(key, iv);
        this.plaintext = plaintext.clone();
    }

    /** One-shot encryption, for checking ciphertext against another implementation. */
    public static byte[] encrypt(byte[] key, byte[] iv, byte[] plaintext) throws GeneralSecurityException {
        return newEncryptor(key, iv).doFinal(plaintext);
    }

    private static Cipher newEncryptor(byte[] key, byte[] iv) throws GeneralSecurityException {
        Cipher c = Cipher.getInstance(TRANSFORMATION);
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return c;
    }

    /** Name and version of the provider that serves the transformation, e.g. "SunJCE 17". */
    public String providerDescription() {
        return cipher.getProvider().getName() + " " + cipher.getProvider().getVersionStr();
    }

    /**
     * Runs {@code iterations} encryptions and returns the elapsed nanoseconds. As in AESNITester,
     * each iteration is one {@code doFinal}: the cipher resets to its initial IV after each call.
     */
    public long run(long iterations) throws GeneralSecurityException {
        long acc = 0;
        long start = System.nanoTime();
        for (long i = 0; i < iterations; i++) {
            byte[] out = cipher.doFinal(plaintext);
            acc += out[(int) (i & 15) % out.length];
        }
        long elapsed = System.nanoTime() - start;
        sink += acc;
        return elapsed;
    }

    /** The folded ciphertext bytes; returning it keeps the loop's result observable. */
    public long sink() {
        return sink;
    }
}
