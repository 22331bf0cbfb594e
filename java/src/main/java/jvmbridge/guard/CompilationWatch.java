package jvmbridge.guard;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import javax.management.JMException;
import javax.management.ObjectName;
import jdk.jfr.FlightRecorder;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedClassLoader;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedMethod;

/**
 * C2's compilations as the JVM's own flight recorder sees them ({@code jdk.Compilation} events
 * at compile level 4), streamed (JDK 14+). A class of its own so that a runtime without the
 * jdk.jfr module fails here, where the guard catches it, and never while loading the agent.
 */
final class CompilationWatch {
    private CompilationWatch() {
    }

    /**
     * Tells {@code compiled} the class name and its loader's name ("" for none) of each method C2
     * compiles; false where no stream can be had (then CodeList is the way). The stream runs in the calling thread's place
     * on a daemon thread of its own: RecordingStream.startAsync's thread is not a daemon, and would
     * keep the server's JVM alive after its main thread ends. The recording stays in a repository
     * of the JVM's user alone (privateRepository), or there is no stream.
     */
    static boolean start(BiConsumer<String, String> compiled) {
        try {
            if (!privateRepository()) {
                return false;
            }
            // Through reflection: RecordingStream is JDK 14+, and the agent is built for Java 11.
            Class<?> streamClass = Class.forName("jdk.jfr.consumer.RecordingStream");
            Object stream = streamClass.getConstructor().newInstance();
            Object settings = streamClass.getMethod("enable", String.class).invoke(stream, "jdk.Compilation");
            settings.getClass().getMethod("withoutThreshold").invoke(settings);
            Consumer<RecordedEvent> onEvent = event -> {
                if (event.getInt("compileLevel") == 4) {
                    RecordedClass type = event.<RecordedMethod>getValue("method").getType();
                    RecordedClassLoader loader = type.getClassLoader();
                    compiled.accept(type.getName(), loader == null || loader.getName() == null ? "" : loader.getName());
                }
            };
            streamClass.getMethod("onEvent", String.class, Consumer.class).invoke(stream, "jdk.Compilation", onEvent);
            Method start = streamClass.getMethod("start");
            Thread thread = new Thread(() -> {
                try {
                    start.invoke(stream);
                } catch (ReflectiveOperationException e) {
                    // the stream ended; the tests then run to their budget and say they were not proven
                }
            }, "jvmbridge-guard-compilations");
            thread.setDaemon(true);
            thread.start();
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The flight recorder's chunk files moved into a new folder only the JVM's user may enter
     * (0700): its default repository, java.io.tmpdir/DATE_PID, is readable by every user and lists
     * the server's compiled methods. The recorder removes its chunks at exit, the folder goes after
     * them (deleteOnExit runs after the shutdown hooks). False where the recorder is in use already
     * (its repository is the application's, not the guard's to move) or cannot be moved.
     */
    private static boolean privateRepository() {
        if (FlightRecorder.isInitialized()) {
            return false;
        }
        Path folder = null;
        try {
            folder = Files.createTempDirectory("jvmbridge-guard-jfr-"); // rwx------ on POSIX
            folder.toFile().deleteOnExit();
            ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "jfrConfigure",
                    new Object[] {new String[] {"repositorypath=" + folder}}, new String[] {String[].class.getName()});
            return true;
        } catch (IOException | JMException | RuntimeException e) {
            if (folder != null) {
                folder.toFile().delete();
            }
            return false;
        }
    }
}
