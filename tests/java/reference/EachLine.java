package reference;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import jvmbridge.guard.ReferenceAes;

/**
 * For tests/integration/test_guard.py: ReferenceAes's main once per line of stdin, the line's words its
 * arguments (an empty hex string an empty word), so that one JVM answers every case in turn.
 */
public final class EachLine {
    public static void main(String[] args) throws Exception {
        BufferedReader lines = new BufferedReader(new InputStreamReader(System.in));
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            ReferenceAes.main(line.split(" ", -1));
        }
    }
}
