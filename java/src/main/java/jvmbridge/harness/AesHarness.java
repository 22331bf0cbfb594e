package jvmbridge.harness;

import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
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

    /**
     * Test vectors without JPype: each stdin line "KEY IV PLAINTEXT" (hex; "-" for an empty
     * plaintext) gets one stdout line with the ciphertext in hex. Lets any implementation check
     * its ciphertext against this JVM's.
     */
    public static void main(String[] args) throws IOException, GeneralSecurityException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length != 3) {
                throw new IllegalArgumentException("expected KEY IV PLAINTEXT in hex, got: " + line);
            }
            byte[] plaintext = fields[2].equals("-") ? new byte[0] : parseHex(fields[2]);
            System.out.println(formatHex(encrypt(parseHex(fields[0]), parseHex(fields[1]), plaintext)));
        }
    }

    // java.util.HexFormat is JDK 17+; the harness must run on 11.
    static byte[] parseHex(String text) {
        if (text.length() % 2 != 0) {
            throw new IllegalArgumentException("odd number of hex digits: " + text);
        }
        byte[] bytes = new byte[text.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    static String formatHex(byte[] bytes) {
        StringBuilder text = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            text.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return text.toString();
    }
}
