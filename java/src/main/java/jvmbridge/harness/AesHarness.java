package jvmbridge.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.lang.reflect.Method;
import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.Security;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Java side of jvmbridge: an AESNITester-style {@code Cipher.doFinal} loop.
 *
 * <p>Python calls into this class once per phase (warm-up, each measured round), never per
 * iteration: a JPype call costs ~700 ns, more than the work being measured. Key, IV and plaintext
 * come from the caller so the native side can encrypt exactly the same bytes.
 */
public final class AesHarness {
    public static final String CBC = "AES/CBC/PKCS5Padding";

    private final Cipher cipher;
    private final SecretKeySpec key;
    private final byte[] iv;
    private final byte[] plaintext;
    /** What each iteration processes: the plaintext, or (decrypting) its ciphertext. */
    private final byte[] input;
    private final boolean decrypt;
    private final boolean freshIvPerMessage;
    /** Folds every ciphertext in, so the JIT cannot prove the work unused (JMH's Blackhole idea). */
    private long sink;
    /**
     * Bytes streamed since the cipher's last init. SunJCE's GCM refuses more than 2^31-1 bytes
     * under one IV, which a long warm-up on a slow host reaches; one init a GiB costs nothing
     * measurable (a few microseconds against ~0.5 s of updates).
     */
    private long streamed;
    private static final long STREAM_BYTES_PER_INIT = 1L << 30;
    /** What the measured loop's last message gave, to check against OpenSSL after the timing. */
    private byte[] lastOutput = new byte[0];

    /**
     * {@code provider} is a registered provider's name, or "" for the JVM's first choice (SunJCE).
     * With {@code decrypt}, each iteration decrypts the ciphertext of {@code plaintext}.
     */
    public AesHarness(String transformation, String provider, boolean decrypt, byte[] key, byte[] iv, byte[] plaintext)
            throws GeneralSecurityException {
        this.key = new SecretKeySpec(key, "AES");
        this.iv = iv.clone();
        this.plaintext = plaintext.clone();
        this.decrypt = decrypt;
        this.input = decrypt ? encrypt(transformation, provider, key, iv, plaintext) : this.plaintext;
        this.cipher = provider.isEmpty() ? Cipher.getInstance(transformation) : Cipher.getInstance(transformation, provider);
        // GCM refuses to encrypt twice under one key and IV, so each GCM message gets its own IV.
        this.freshIvPerMessage = !decrypt && transformation.contains("/GCM/");
        cipher.init(decrypt ? Cipher.DECRYPT_MODE : Cipher.ENCRYPT_MODE, this.key, parameters(transformation, this.iv));
    }

    /** One-shot encryption, for checking ciphertext against another implementation. */
    public static byte[] encrypt(String transformation, String provider, byte[] key, byte[] iv, byte[] plaintext)
            throws GeneralSecurityException {
        return new AesHarness(transformation, provider, false, key, iv, plaintext).cipher.doFinal(plaintext);
    }

    /** One pass of what each iteration does (decrypting: the plaintext comes back). */
    public byte[] once() throws GeneralSecurityException {
        if (freshIvPerMessage) {
            nextIv();
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
        }
        return cipher.doFinal(input);
    }

    /**
     * Registers the JCE provider class found on the classpath and returns its name. A provider
     * with native code (ACCP) reports a failed load through assertHealthy(), called when present.
     */
    public static String installProvider(String className) throws ReflectiveOperationException {
        Provider provider = (Provider) Class.forName(className).getConstructor().newInstance();
        try {
            Method assertHealthy = provider.getClass().getMethod("assertHealthy");
            assertHealthy.invoke(provider);
        } catch (NoSuchMethodException pureJava) {
            // nothing native to check
        }
        Security.addProvider(provider);
        return provider.getName();
    }

    private static AlgorithmParameterSpec parameters(String transformation, byte[] iv) {
        if (transformation.contains("/ECB/")) {
            return null;  // ECB takes no IV and refuses one
        }
        return transformation.contains("/GCM/") ? new GCMParameterSpec(128, iv) : new IvParameterSpec(iv);
    }

    /** Name and version of the provider that serves the transformation, e.g. "SunJCE 17", "BC 1.80". */
    public String providerDescription() {
        Provider provider = cipher.getProvider();
        String version = provider.getVersionStr();
        // getVersionStr() can be lossy (BC 1.80 says "1.8") where the info text is precise ("v1.80").
        Matcher inInfo = Pattern.compile("\\bv(\\d+(\\.\\d+)+)").matcher(provider.getInfo());
        if (inInfo.find() && inInfo.group(1).startsWith(version)) {
            version = inInfo.group(1);
        }
        return provider.getName() + " " + version;
    }

    /**
     * Runs {@code iterations} encryptions and returns the elapsed nanoseconds. As in AESNITester,
     * each iteration is one {@code doFinal}: the cipher resets to its initial IV after each call.
     */
    public long run(long iterations) throws GeneralSecurityException {
        long acc = 0;
        byte[] out = lastOutput;
        long start = System.nanoTime();
        for (long i = 0; i < iterations; i++) {
            out = once();
            acc += out.length == 0 ? 1 : out[(int) (i & 15) % out.length];
        }
        long elapsed = System.nanoTime() - start;
        sink += acc;
        lastOutput = out;
        return elapsed;
    }

    /** The output of the last message {@link #run} timed; its IV is {@link #iv()}. */
    public byte[] lastOutput() {
        return lastOutput.clone();
    }

    /** The IV the last message used (GCM encryption moves it on per message). */
    public byte[] iv() {
        return iv.clone();
    }

    /**
     * After the timed rounds: {@code updates} updates of the message on the same Cipher, from a
     * fresh init, their outputs concatenated, so that the stream shape's bytes can be checked
     * with the code the JIT compiled for the measured loop.
     */
    public byte[] streamOutput(int updates) throws GeneralSecurityException {
        restartStream();
        byte[] all = new byte[updates * (input.length + 32)];
        int written = 0;
        for (int i = 0; i < updates; i++) {
            written += cipher.update(input, 0, input.length, all, written);
        }
        return Arrays.copyOf(all, written);
    }

    /**
     * The {@code openssl speed -evp} shape: {@code update} into a preallocated buffer, never
     * finishing the message, so there is no per-message reset, padding or allocation.
     */
    public long runStream(long iterations) throws GeneralSecurityException {
        if (decrypt && cipher.getAlgorithm().contains("/GCM/")) {
            throw new UnsupportedOperationException("a GCM decryption stream cannot be measured in the JCE: it holds "
                    + "every byte until the tag is checked at doFinal");
        }
        byte[] out = new byte[input.length + 32];
        long acc = 0;
        long start = System.nanoTime();
        for (long i = 0; i < iterations; i++) {
            if (streamed > STREAM_BYTES_PER_INIT) {
                restartStream();
            }
            acc += cipher.update(input, 0, input.length, out, 0) + out[0];
            streamed += input.length;
        }
        long elapsed = System.nanoTime() - start;
        sink += acc;
        return elapsed;
    }

    /** A fresh init (GCM encryption: on the next IV, as it refuses to reuse one). */
    private void restartStream() throws GeneralSecurityException {
        if (freshIvPerMessage) {
            nextIv();
        }
        cipher.init(decrypt ? Cipher.DECRYPT_MODE : Cipher.ENCRYPT_MODE, key, parameters(cipher.getAlgorithm(), iv));
        streamed = 0;
    }

    private void nextIv() {
        for (int i = iv.length - 1; i >= 0 && ++iv[i] == 0; i--) {
            // carry into the next byte
        }
    }

    /** The folded ciphertext bytes; returning it keeps the loop's result observable. */
    public long sink() {
        return sink;
    }

    /**
     * Two uses without JPype.
     * {@code vectors [TRANSFORMATION [PROVIDER_CLASS]]}: each stdin line "KEY IV PLAINTEXT" (hex;
     * "-" for empty) gets one stdout line with the ciphertext in hex, to check against others.
     * {@code loop TRANSFORMATION BYTES SECONDS}: encrypt BYTES-byte messages for SECONDS, so that a
     * JIT log can show which methods were intrinsified.
     */
    public static void main(String[] args) throws IOException, GeneralSecurityException, ReflectiveOperationException {
        String command = args.length > 0 ? args[0] : "";
        if (command.equals("vectors") && args.length <= 3) {
            String provider = args.length == 3 ? installProvider(args[2]) : "";
            printVectors(args.length >= 2 ? args[1] : CBC, provider);
        } else if (command.equals("loop") && args.length == 4) {
            loop(args[1], Integer.parseInt(args[2]), Double.parseDouble(args[3]));
        } else {
            System.err.println("usage: AesHarness vectors [TRANSFORMATION [PROVIDER_CLASS]]"
                    + " | loop TRANSFORMATION BYTES SECONDS");
            System.exit(2);
        }
    }

    private static void printVectors(String transformation, String provider) throws IOException, GeneralSecurityException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length != 3) {
                throw new IllegalArgumentException("expected KEY IV PLAINTEXT in hex, got: " + line);
            }
            byte[] plaintext = fields[2].equals("-") ? new byte[0] : parseHex(fields[2]);
            System.out.println(formatHex(encrypt(transformation, provider, parseHex(fields[0]), parseHex(fields[1]), plaintext)));
        }
    }

    private static void loop(String transformation, int bytes, double seconds) throws GeneralSecurityException {
        AesHarness harness = new AesHarness(transformation, "", false, new byte[32], new byte[transformation.contains("/GCM/") ? 12 : 16],
                new byte[bytes]);
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
            harness.run(1000);
        }
        System.err.println("sink " + harness.sink());
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
