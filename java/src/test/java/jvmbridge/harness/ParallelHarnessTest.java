package jvmbridge.harness;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class ParallelHarnessTest {
    private static AesHarness harness() throws Exception {
        return new AesHarness(AesHarness.CBC, "", false, new byte[32], new byte[16], new byte[38]);
    }

    @Test
    public void everyThreadRunsTheFullCount() throws Exception {
        AesHarness single = harness();
        single.run(500);
        try (ParallelHarness parallel = new ParallelHarness(new AesHarness[] {harness(), harness(), harness()}, false)) {
            assertTrue(parallel.run(500) > 0);
            // Each of the three folded the same 500 ciphertexts as the single harness.
            assertEquals(3 * single.sink(), parallel.sink());
        }
    }

    @Test(expected = UnsupportedOperationException.class)
    public void aLoopsOwnFailureReachesTheCaller() throws Exception {
        AesHarness gcmDecrypt = new AesHarness("AES/GCM/NoPadding", "", true, new byte[16], new byte[12], new byte[38]);
        try (ParallelHarness parallel = new ParallelHarness(new AesHarness[] {gcmDecrypt, gcmDecrypt}, true)) {
            parallel.run(1);
        }
    }
}
