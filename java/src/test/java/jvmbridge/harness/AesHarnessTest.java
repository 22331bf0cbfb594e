package jvmbridge.harness;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class AesHarnessTest {
    // NIST SP 800-38A, F.2.5 CBC-AES256.Encrypt.
    private static final byte[] KEY = AesHarness.parseHex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    private static final byte[] IV = AesHarness.parseHex("000102030405060708090a0b0c0d0e0f");
    private static final String PLAINTEXT = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
            + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
    private static final String CIPHERTEXT = "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
            + "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b";

    @Test
    public void matchesNistVectorThenAddsOnePaddingBlock() throws Exception {
        byte[] out = AesHarness.encrypt(AesHarness.CBC, "", KEY, IV, AesHarness.parseHex(PLAINTEXT));
        assertEquals(64 + 16, out.length);
        assertEquals(CIPHERTEXT, AesHarness.formatHex(out).substring(0, 128));
    }

    @Test
    public void eachIterationIsAFreshDoFinalFromTheSameIv() throws Exception {
        byte[] plaintext = new byte[38];
        byte[] ciphertext = AesHarness.encrypt(AesHarness.CBC, "", KEY, IV, plaintext);
        AesHarness harness = new AesHarness(AesHarness.CBC, "", false, KEY, IV, plaintext);
        harness.run(40);
        // Same IV every time, so every iteration folds a byte of the same ciphertext into the sink.
        long expected = 0;
        for (int i = 0; i < 40; i++) {
            expected += ciphertext[(i & 15) % ciphertext.length];
        }
        assertEquals(expected, harness.sink());
        assertNotEquals(0, expected);
    }

    @Test
    public void runReportsElapsedTime() throws Exception {
        AesHarness harness = new AesHarness(AesHarness.CBC, "", false, KEY, IV, new byte[38]);
        assertTrue(harness.run(1000) > 0);
        assertTrue(harness.providerDescription().startsWith("SunJCE"));
    }

    @Test
    public void gcmGetsAFreshIvPerMessage() throws Exception {
        // Without a fresh IV the second doFinal would throw "Cannot reuse iv for GCM encryption".
        AesHarness harness = new AesHarness("AES/GCM/NoPadding", "", false, KEY, new byte[12], new byte[38]);
        assertTrue(harness.run(3) > 0);
    }

    @Test
    public void aGcmStreamRunsPastTheTwoGibibytesOneIvAllows() throws Exception {
        // SunJCE refuses a GCM stream beyond 2^31-1 bytes under one IV; a long warm-up reaches that.
        int size = 1 << 16;
        AesHarness harness = new AesHarness("AES/GCM/NoPadding", "", false, KEY, new byte[12], new byte[size]);
        assertTrue(harness.runStream((Integer.MAX_VALUE / size) + 2) > 0);
    }

    @Test
    public void streamChainsBlocksAcrossCalls() throws Exception {
        // Two 32-byte updates continue one CBC stream: the same bytes as one 64-byte encryption.
        byte[] plaintext = AesHarness.parseHex(PLAINTEXT);
        AesHarness harness = new AesHarness(AesHarness.CBC, "", false, KEY, IV, java.util.Arrays.copyOf(plaintext, 32));
        harness.runStream(2);
        assertTrue(harness.sink() != 0);
        assertEquals(CIPHERTEXT.substring(0, 64), AesHarness.formatHex(AesHarness.encrypt(AesHarness.CBC, "", KEY, IV,
                java.util.Arrays.copyOf(plaintext, 32))).substring(0, 64));
    }

    @Test
    public void decryptingGivesThePlaintextBack() throws Exception {
        byte[] plaintext = AesHarness.parseHex(PLAINTEXT);
        for (String transformation : new String[] {AesHarness.CBC, "AES/CTR/NoPadding", "AES/GCM/NoPadding"}) {
            byte[] iv = transformation.contains("GCM") ? new byte[12] : IV;
            AesHarness harness = new AesHarness(transformation, "", true, KEY, iv, plaintext);
            assertArrayEquals(transformation, plaintext, harness.once());
            assertArrayEquals(transformation, plaintext, harness.once());  // repeatable, GCM included
        }
    }

    @Test(expected = UnsupportedOperationException.class)
    public void gcmDecryptionStreamIsRefused() throws Exception {
        new AesHarness("AES/GCM/NoPadding", "", true, KEY, new byte[12], new byte[38]).runStream(1);
    }

    @Test
    public void hexRoundTrips() {
        byte[] bytes = {0, 1, (byte) 0x7f, (byte) 0x80, (byte) 0xff};
        assertEquals("00017f80ff", AesHarness.formatHex(bytes));
        assertArrayEquals(bytes, AesHarness.parseHex("00017f80ff"));
    }
}
