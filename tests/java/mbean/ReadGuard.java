package mbean;

import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * For tests/integration/test_guard.py: run with the guard agent, waits until the MBean jvmbridge:type=Guard says
 * every mode has an answer (at most 120 s), then prints its State and its Modes, one per line.
 */
public final class ReadGuard {
    public static void main(String[] args) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("jvmbridge:type=Guard");
        long until = System.nanoTime() + 120_000_000_000L;
        String state = "";
        while (System.nanoTime() < until) {
            state = (String) server.getAttribute(name, "State");
            if (!state.contains("waiting") && !state.contains("testing")) {
                break;
            }
            Thread.sleep(500);
        }
        System.out.println(state);
        System.out.println(String.join(",", (String[]) server.getAttribute(name, "Modes")));
        System.out.println(System.getProperty("jvmbridge.guard"));
    }
}
