package jvmbridge.guard;

import java.io.IOException;
import java.io.InputStream;

/**
 * A class of SelfTest (and its nested classes) of its own for each test, named by its loader, so
 * that C2 compiling that test's code is an event of its own ({@code jdk.Compilation} names the
 * method's class loader): a later test starts on code not yet compiled, and is proven only once
 * C2 has compiled it, however the JIT treated the tests before it. Every other class comes from
 * the agent's own loader, the cases' class (jvmbridge.vectors.AesCase) too: it holds bytes and no
 * code a test proves (its constructor runs once a case), and each test makes cases of its own.
 */
final class TestLoader extends ClassLoader {
    private static final String TESTS = SelfTest.class.getName();

    TestLoader(String name) {
        super(name, TestLoader.class.getClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.equals(TESTS) && !name.startsWith(TESTS + "$")) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> loaded = findLoadedClass(name);
            if (loaded == null) {
                try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                    if (in == null) {
                        throw new ClassNotFoundException(name);
                    }
                    byte[] bytes = in.readAllBytes();
                    loaded = defineClass(name, bytes, 0, bytes.length);
                } catch (IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
            }
            if (resolve) {
                resolveClass(loaded);
            }
            return loaded;
        }
    }
}
