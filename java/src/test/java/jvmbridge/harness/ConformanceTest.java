package jvmbridge.harness;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.Collections;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import jvmbridge.vectors.AesCase;
import org.junit.Test;

public class ConformanceTest {
    private static final byte[] KEY = new byte[16];
    private static final byte[] IV = new byte[16];

    private static AesCase ctrCase(int size, byte[] expected) {
        return new AesCase(7, KEY, IV, new byte[0], false, new byte[size], expected);
    }

    private static byte[] oneShot(String transformation, int size) throws Exception {
        Cipher cipher = Cipher.getInstance(transformation);
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(KEY, "AES"), new IvParameterSpec(IV));
        return cipher.doFinal(new byte[size]);
    }

    private static Conformance sweep(String transformation, AesCase c, PrintStream out) throws Exception {
        return new Conformance(transformation, "", Collections.singletonList(c), Conformance.PATTERNS, out, false);
    }

    @Test
    public void everyCallPatternGivesTheOneShotBytes() throws Exception {
        for (String transformation : new String[] {"AES/CTR/NoPadding", "AES/CBC/PKCS5Padding"}) {
            for (int size : new int[] {0, 1, 15, 16, 17, 100, 5000}) {
                AesCase c = ctrCase(size, oneShot(transformation, size));
                Conformance sweep = sweep(transformation, c, System.out);
                for (String pattern : Conformance.PATTERNS) {
                    assertNull(transformation + " " + size + " " + pattern, sweep.check(c, pattern));
                }
            }
        }
    }

    @Test
    public void aWrongExpectationIsReportedWithItsFirstDifferingByte() throws Exception {
        byte[] expected = oneShot("AES/CTR/NoPadding", 40);
        expected[9] ^= 1;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        Conformance sweep = sweep("AES/CTR/NoPadding", ctrCase(40, expected), new PrintStream(printed, true, "US-ASCII"));
        assertEquals(Conformance.PATTERNS.size(), sweep.pass(3, 0));
        String text = printed.toString("US-ASCII");
        assertTrue(text, text.contains("@jvb diff 3 7 oneshot 9 "));
        assertTrue(text, text.contains("@jvb end 3 " + Conformance.PATTERNS.size()));
    }

    @Test
    public void aGcmDecryptionRefusesATamperedTag() throws Exception {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        byte[] iv = new byte[12];
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(KEY, "AES"), new GCMParameterSpec(128, iv));
        byte[] ciphertext = cipher.doFinal(new byte[33]);
        AesCase c = new AesCase(1, KEY, iv, new byte[0], true, ciphertext, new byte[33]);
        Conformance sweep = sweep("AES/GCM/NoPadding", c, System.out);
        for (String pattern : Conformance.PATTERNS) {
            assertNull(pattern, sweep.check(c, pattern));
        }
    }
}
