package jvmbridge.guard;

import java.lang.management.ManagementFactory;
import java.util.function.BiConsumer;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Where there is no event stream (JDK 11 to 13): the code cache as the JVM itself lists it
 * ({@code Compiler.codelist}, the DiagnosticCommand MBean's {@code compilerCodelist}, run in the
 * calling thread; JDK 9+), polled. Each poll tells {@code compiled} the class of each method C2
 * compiled since the last one (compile ids only grow; the first poll: all C2 code in use), with
 * {@code null} for its loader: the
 * listing does not name loaders, so a new compilation of the self-test is taken as the running
 * test's. A listing costs milliseconds per thousand compiled methods, so it is polled at most
 * once a second while a test runs, and rarely otherwise (the guard's choice).
 */
final class CodeList {
    private final BiConsumer<String, String> compiled;
    private final ObjectName diagnostics;
    private long lastId = -1;
    private long lastPoll;

    private CodeList(BiConsumer<String, String> compiled, ObjectName diagnostics) {
        this.compiled = compiled;
        this.diagnostics = diagnostics;
    }

    /** The code list's watch, or null where this JVM has no such command. */
    static CodeList start(BiConsumer<String, String> compiled) {
        try {
            ObjectName diagnostics = new ObjectName("com.sun.management:type=DiagnosticCommand");
            CodeList list = new CodeList(compiled, diagnostics);
            list.poll(0);
            return list;
        } catch (JMException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** Reads the list if {@code everyMillis} have passed since the last read. */
    void poll(long everyMillis) throws JMException {
        long now = System.nanoTime();
        if (lastPoll != 0 && now - lastPoll < everyMillis * 1_000_000L) {
            return;
        }
        lastPoll = now;
        String listing = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                diagnostics, "compilerCodelist", new Object[] {null}, new String[] {String[].class.getName()});
        long newest = lastId;
        // "ID LEVEL STATE package.Class.method(signature) [addresses]"; state 0 is code in use.
        for (String line : listing.split("\n")) {
            String[] fields = line.trim().split(" ", 5);
            if (fields.length < 4 || !fields[0].matches("\\d+")) {
                continue;
            }
            long id = Long.parseLong(fields[0]);
            newest = Math.max(newest, id);
            if (id > lastId && fields[1].equals("4") && fields[2].equals("0")) {
                String method = fields[3].substring(0, Math.max(0, fields[3].indexOf('(')));
                compiled.accept(method.substring(0, Math.max(0, method.lastIndexOf('.'))), null);
            }
        }
        lastId = newest;
    }
}
