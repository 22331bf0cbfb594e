package jvmbridge.guard;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import jvmbridge.vectors.AesCase;
import org.junit.Test;

public class ReferenceAesTest {
    private static final byte[] BLOCK = ReferenceAes.hex("00112233445566778899aabbccddeeff");

    @Test
    public void fips197AppendixCVectorsEachKeySize() {
        // FIPS-197 Appendix C.1-C.3: key 000102..., plaintext 00112233...
        String[][] vectors = {
            {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
            {"000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"},
            {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"},
        };
        for (String[] vector : vectors) {
            ReferenceAes aes = new ReferenceAes(ReferenceAes.hex(vector[0]));
            byte[] encrypted = aes.encryptBlock(BLOCK, 0);
            assertEquals(vector[1], ReferenceAes.hex(encrypted));
            assertEquals(ReferenceAes.hex(BLOCK), ReferenceAes.hex(aes.decryptBlock(encrypted, 0)));
        }
    }

    @Test
    public void sp800_38aCtrAes128FirstBlock() {
        // NIST SP 800-38A F.5.1 CTR-AES128.Encrypt, block 1.
        byte[] out = ReferenceAes.ctr(ReferenceAes.hex("2b7e151628aed2a6abf7158809cf4f3c"),
                ReferenceAes.hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), ReferenceAes.hex("6bc1bee22e409f96e93d7e117393172a"));
        assertEquals("874d6191b620e3261bef6864990db6ce", ReferenceAes.hex(out));
    }

    @Test
    public void sp800_38aEcbAndCfb128Aes128FirstBlock() {
        // NIST SP 800-38A F.1.1 ECB-AES128.Encrypt and F.3.13 CFB128-AES128.Encrypt, block 1 (ECB
        // with PKCS#5 padding: the padding block follows, so only the first block is the vector's).
        byte[] key = ReferenceAes.hex("2b7e151628aed2a6abf7158809cf4f3c");
        byte[] plaintext = ReferenceAes.hex("6bc1bee22e409f96e93d7e117393172a");
        byte[] ecb = ReferenceAes.ecbEncrypt(key, plaintext);
        assertEquals("3ad77bb40d7a3660a89ecaf32466ef97", ReferenceAes.hex(java.util.Arrays.copyOf(ecb, 16)));
        assertEquals(ReferenceAes.hex(plaintext), ReferenceAes.hex(ReferenceAes.ecbDecrypt(key, ecb)));
        byte[] iv = ReferenceAes.hex("000102030405060708090a0b0c0d0e0f");
        byte[] cfb = ReferenceAes.cfb(key, iv, plaintext, false);
        assertEquals("3b3fd92eb72dad20333449f8e83cfb4a", ReferenceAes.hex(cfb));
        assertEquals(ReferenceAes.hex(plaintext), ReferenceAes.hex(ReferenceAes.cfb(key, iv, cfb, true)));
    }

    @Test
    public void gcmEqualsTheJcesWithAndWithoutAad() throws Exception {
        byte[] key = ReferenceAes.hex("feffe9928665731c6d6a8f9467308308");
        byte[] iv = ReferenceAes.hex("cafebabefacedbaddecaf888");
        for (int size : new int[] {0, 1, 16, 60, 64}) {
            for (int aadLength : new int[] {0, 20}) {
                byte[] plaintext = new byte[size];
                byte[] aad = new byte[aadLength];
                java.util.Arrays.fill(plaintext, (byte) 0xd9);
                javax.crypto.Cipher jce = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
                jce.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(key, "AES"),
                        new javax.crypto.spec.GCMParameterSpec(128, iv));
                jce.updateAAD(aad);
                byte[] expected = jce.doFinal(plaintext);
                assertEquals(ReferenceAes.hex(expected), ReferenceAes.hex(ReferenceAes.gcmEncrypt(key, iv, aad, plaintext)));
                assertEquals(ReferenceAes.hex(plaintext), ReferenceAes.hex(ReferenceAes.gcmDecrypt(key, iv, aad, expected)));
            }
        }
    }

    @Test
    public void theSelfTestPassesOnThisJvmsAesAndCatchesAWrongByte() {
        SelfTest test = new SelfTest("CTR", null);
        assertNull(test.pass()); // the JVM running the unit tests is a good one, even interpreted
        AesCase first = test.cases.get(5);
        first.expected[0] ^= 1;
        assertNotNull(test.pass());
    }
}
