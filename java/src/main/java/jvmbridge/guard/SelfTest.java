package jvmbridge.guard;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import javax.crypto.Cipher;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import jvmbridge.vectors.AesCase;

/**
 * One mode's known-answer and differential test, in the server's own JVM: every case through
 * every call pattern that has broken AES intrinsics before, against ReferenceAes's answers.
 *
 * <p>Nothing here may put the server at risk. Every Cipher is new for each case and a case is at
 * most 4,113 bytes, so no stream of hundreds of thousands of 1- or 5-byte updates on one Cipher
 * (which crashes Temurin 17.0.3, JDK-8292158) ever runs; 1..15-byte updates mixed with longer
 * ones, which made that build compute wrong bytes, do, into outputs with slack past their end, so
 * that its stub's stores beyond the bytes it returns (which corrupted the heap in the first
 * version of this test) land there, are checked, and are reported as wrong.
 */
public final class SelfTest implements Supplier<String> {
    /** How a message is fed to the Cipher; the output must not depend on it. */
    static final List<String> PATTERNS = Arrays.asList("oneshot", "updates", "mixed", "inplace", "direct");
    private static final int[] EDGES = {127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097};
    // Bytes past an output that the Cipher must leave as they are (far more than a block or two).
    private static final int SLACK = 256;
    private static final byte CANARY = 0x5a;

    /** A Cipher that stored past the bytes it returned (into the slack, which is why there is one). */
    private static final class Overrun extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Overrun(String message) {
            super(message);
        }
    }

    final String mode; // "CBC", "CTR", "GCM", "ECB" or "CFB"
    private final String transformation;
    private final Provider provider; // null for the JVM's first choice
    final List<AesCase> cases = new ArrayList<>();

    public SelfTest(String mode, Provider provider) {
        this.mode = mode;
        this.provider = provider;
        this.transformation = transformation(mode);
        Random random = new Random(0x6a76_6d62L);
        int id = 0;
        for (int keyBytes : new int[] {16, 32}) {
            for (boolean decrypt : new boolean[] {false, true}) {
                List<Integer> sizes = new ArrayList<>();
                for (int size = 0; size <= 64; size++) {
                    sizes.add(size);
                }
                for (int edge : EDGES) {
                    sizes.add(edge);
                }
                for (int size : sizes) {
                    byte[] key = new byte[keyBytes];
                    byte[] iv = new byte[mode.equals("GCM") ? 12 : 16];
                    byte[] aad = new byte[mode.equals("GCM") && id % 2 == 1 ? 13 : 0];
                    byte[] plaintext = new byte[size];
                    random.nextBytes(key);
                    random.nextBytes(iv);
                    random.nextBytes(aad);
                    random.nextBytes(plaintext);
                    if (mode.equals("CTR")) {
                        iv[15] = (byte) 0xfe; // the counter's carry crosses a byte within two blocks
                    }
                    byte[] ciphertext = encrypted(mode, key, iv, aad, plaintext);
                    cases.add(decrypt ? new AesCase(id++, key, iv, aad, true, ciphertext, plaintext)
                            : new AesCase(id++, key, iv, aad, false, plaintext, ciphertext));
                }
            }
        }
    }

    /** A case as a wrong output names it: "AES-128 decrypt of 33 bytes with 13 bytes of AAD". */
    static String name(AesCase c) {
        int size = c.decrypt ? c.expected.length : c.input.length; // the plaintext's
        return "AES-" + c.key.length * 8 + " " + (c.decrypt ? "decrypt" : "encrypt") + " of " + size + " bytes"
                + (c.aad.length > 0 ? " with " + c.aad.length + " bytes of AAD" : "");
    }

    /** The transformation a mode is tested as: the padded modes with PKCS#5 padding, so every length is one case. */
    static String transformation(String mode) {
        return "AES/" + mode + (mode.equals("CBC") || mode.equals("ECB") ? "/PKCS5Padding" : "/NoPadding");
    }

    private static byte[] encrypted(String mode, byte[] key, byte[] iv, byte[] aad, byte[] plaintext) {
        switch (mode) {
            case "CBC":
                return ReferenceAes.cbcEncrypt(key, iv, plaintext);
            case "CTR":
                return ReferenceAes.ctr(key, iv, plaintext);
            case "GCM":
                return ReferenceAes.gcmEncrypt(key, iv, aad, plaintext);
            case "ECB":
                return ReferenceAes.ecbEncrypt(key, plaintext);
            case "CFB":
                return ReferenceAes.cfb(key, iv, plaintext, false);
            default:
                throw new IllegalArgumentException("no mode " + mode);
        }
    }

    /** A pass (the interface the guard calls it through: each test is a class of its own, TestLoader). */
    @Override
    public String get() {
        return pass();
    }

    @Override
    public String toString() {
        return cases.size() + " cases x " + PATTERNS.size() + " call patterns";
    }

    /**
     * A pass: each case in each pattern, smallest first within each key size and direction; the
     * first wrong output, or null. It stops there: on a broken stub every further call is another
     * chance to corrupt the heap (Temurin 17.0.3's CTR stub stores past its output), and one wrong
     * output is the answer.
     */
    String pass() {
        for (String pattern : PATTERNS) {
            for (AesCase c : cases) {
                String wrong = check(c, pattern);
                if (wrong != null) {
                    return pattern + " pattern, " + name(c) + ": " + wrong;
                }
            }
        }
        return null;
    }

    private String check(AesCase c, String pattern) {
        byte[] actual;
        try {
            actual = run(c, pattern);
        } catch (Overrun e) {
            return e.getMessage();
        } catch (GeneralSecurityException | RuntimeException e) {
            return "threw " + e;
        }
        if (Arrays.equals(actual, c.expected)) {
            return null;
        }
        int at = 0;
        while (at < Math.min(actual.length, c.expected.length) && actual[at] == c.expected[at]) {
            at++;
        }
        return at < Math.min(actual.length, c.expected.length)
                ? String.format("byte %d differs (JVM %02x, reference %02x)", at, actual[at] & 0xff, c.expected[at] & 0xff)
                : "JVM gave " + actual.length + " bytes, reference " + c.expected.length;
    }

    private byte[] run(AesCase c, String pattern) throws GeneralSecurityException {
        switch (pattern) {
            case "oneshot":
                return cipher(c).doFinal(c.input);
            case "updates":
                return chunked(c, false);
            case "mixed":
                return chunked(c, true);
            case "inplace": {
                Cipher cipher = cipher(c);
                byte[] buffer = Arrays.copyOf(c.input, Math.max(c.input.length, cipher.getOutputSize(c.input.length)) + SLACK);
                Arrays.fill(buffer, buffer.length - SLACK, buffer.length, CANARY);
                int written = cipher.doFinal(buffer, 0, c.input.length, buffer, 0);
                untouched(buffer, written);
                return Arrays.copyOf(buffer, written);
            }
            case "direct": {
                Cipher cipher = cipher(c);
                ByteBuffer input = ByteBuffer.allocateDirect(c.input.length);
                ByteBuffer output = ByteBuffer.allocateDirect(cipher.getOutputSize(c.input.length));
                input.put(c.input).flip();
                cipher.doFinal(input, output);
                output.flip();
                byte[] actual = new byte[output.remaining()];
                output.get(actual);
                return actual;
            }
            default:
                throw new IllegalArgumentException("unknown pattern " + pattern);
        }
    }

    /**
     * Updates of 1..15 bytes in turn ("updates"), or such updates mixed with 16..100-byte ones
     * ("mixed"), into one output array with SLACK bytes beyond what the output needs: a stub that
     * stores past the bytes it returns (Temurin 17.0.3's CTR stub does) writes into the slack, which
     * is checked, and never into the server's heap.
     */
    private byte[] chunked(AesCase c, boolean mixed) throws GeneralSecurityException {
        Cipher cipher = cipher(c);
        byte[] output = new byte[cipher.getOutputSize(c.input.length) + SLACK];
        Arrays.fill(output, output.length - SLACK, output.length, CANARY);
        Random random = new Random(c.id);
        int written = 0;
        int next = c.id % 15;
        for (int offset = 0; offset < c.input.length; ) {
            int length = mixed && random.nextBoolean() ? 16 + random.nextInt(85) : 1 + next++ % 15;
            length = Math.min(length, c.input.length - offset);
            written += cipher.update(c.input, offset, length, output, written);
            offset += length;
        }
        written += cipher.doFinal(output, written);
        untouched(output, written);
        return Arrays.copyOf(output, written);
    }

    /** SLACK's canary, still there past the {@code written} bytes the Cipher said it wrote. */
    private static void untouched(byte[] output, int written) {
        for (int i = Math.max(written, output.length - SLACK); i < output.length; i++) {
            if (output[i] != CANARY) {
                throw new Overrun("stored bytes past the " + written + " it returned");
            }
        }
    }

    /** A Cipher for {@code transformation} from {@code provider}, or the JVM's first choice for null. */
    static Cipher instance(String transformation, Provider provider)
            throws NoSuchAlgorithmException, NoSuchPaddingException {
        return provider == null ? Cipher.getInstance(transformation) : Cipher.getInstance(transformation, provider);
    }

    private Cipher cipher(AesCase c) throws GeneralSecurityException {
        Cipher cipher = instance(transformation, provider);
        int direction = c.decrypt ? Cipher.DECRYPT_MODE : Cipher.ENCRYPT_MODE;
        if (mode.equals("GCM")) {
            cipher.init(direction, new SecretKeySpec(c.key, "AES"), new GCMParameterSpec(128, c.iv));
            cipher.updateAAD(c.aad);
        } else if (mode.equals("ECB")) {
            cipher.init(direction, new SecretKeySpec(c.key, "AES"));
        } else {
            cipher.init(direction, new SecretKeySpec(c.key, "AES"), new IvParameterSpec(c.iv));
        }
        return cipher;
    }
}
