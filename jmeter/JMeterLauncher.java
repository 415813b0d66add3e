/*
 * Non-GUI launcher for Debian's JMeter 2.13 (packages jmeter + jmeter-http).
 *
 * Why it exists: Debian ships JMeter 2.13 with XStream 1.4.20, whose security
 * framework refuses every type JMeter 2.13 never allow-listed, so a plain
 * `jmeter -n -t plan.jmx` dies with
 *   ForbiddenClassException: org.apache.jmeter.save.ScriptWrapper
 * This launcher loads JMeter's properties, opens the two XStream instances of
 * org.apache.jmeter.save.SaveService (JMXSAVER for plans, JTLSAVER for
 * results) to any type, then hands the command line to JMeter.start().
 * Only run plans you trust with it: that is what the allow-list was for.
 *
 * It also makes the process end when the test ends: JMeter 2.13 relies on the
 * JVM exiting by itself, and an error while loading the plan only prints a
 * line. Exit status: 0 when the test ran to "... end of run", 1 when JMeter
 * did not start the test or reported an error, 3 on the optional time limit
 * (system property cityhub.jmeter.timeout, seconds; 0 = none), which ends the
 * JVM at once: samples still in flight are lost.
 *
 * Used by jmeter/run.sh, which compiles it outside the repository.
 */

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Properties;

public final class JMeterLauncher {

    private static final String DEFAULT_HOME = "/usr/share/jmeter";

    private static volatile boolean testStarted = false;
    private static volatile boolean testEnded = false;
    private static volatile boolean errorSeen = false;

    /** Watches JMeter's console lines while passing them through unchanged. */
    private static final class WatchingStream extends OutputStream {
        private final PrintStream target;
        private final StringBuilder line = new StringBuilder();

        WatchingStream(PrintStream target) {
            this.target = target;
        }

        @Override
        public synchronized void write(int b) {
            target.write(b);
            if (b == '\n') {
                inspect(line.toString());
                line.setLength(0);
            } else if (line.length() < 4096) {
                line.append((char) b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public void flush() {
            target.flush();
        }

        private static void inspect(String l) {
            // 2.13: "Starting the test @ ..."; 5.x: "Starting standalone test @ ..."
            if (l.startsWith("Starting") && l.contains("test @")) {
                testStarted = true;
            } else if (l.contains("... end of run")) {
                testEnded = true;
            } else if (l.startsWith("Error in NonGUIDriver")
                    || l.startsWith("Could not open")
                    || l.startsWith("An error occurred")
                    || l.startsWith("Error: ")) {
                errorSeen = true;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String home = System.getProperty("jmeter.home");
        if (home == null || home.isEmpty()) {
            home = DEFAULT_HOME;
            // NewDriver reads it to find JMeter's directory when the class path
            // has more than one entry (it has here).
            System.setProperty("jmeter.home", home);
        }

        PrintStream console = System.out;
        System.setOut(new PrintStream(new WatchingStream(console), true));

        Class<?> utils = Class.forName("org.apache.jmeter.util.JMeterUtils");
        utils.getMethod("setJMeterHome", String.class).invoke(null, home);
        utils.getMethod("loadJMeterProperties", String.class)
                .invoke(null, home + "/bin/jmeter.properties");

        // Apply -J / -q before SaveService (and the classes it pulls in) read
        // their settings in static initialisers; JMeter.start() applies them
        // again later, which is harmless.
        Properties props = (Properties) utils.getMethod("getJMeterProperties").invoke(null);
        applyCommandLineProperties(args, props);
        initLogging(utils);

        allowAllTypes();

        final long timeoutSeconds = Long.getLong("cityhub.jmeter.timeout", 0L);
        final long deadline = timeoutSeconds > 0
                ? System.currentTimeMillis() + timeoutSeconds * 1000L : Long.MAX_VALUE;

        Class<?> jmeter = Class.forName("org.apache.jmeter.JMeter");
        Object instance = jmeter.getConstructor().newInstance();
        Method start = jmeter.getMethod("start", String[].class);
        try {
            start.invoke(instance, (Object) args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            e.getCause().printStackTrace();
            exit(1, "JMeter.start failed");
        }

        if (!isNonGui(args)) {
            // GUI or server mode: leave the JVM to JMeter.
            return;
        }

        // start() returns once the engine thread runs (or right away when the
        // plan could not be loaded). Wait for the end-of-run line.
        while (true) {
            if (errorSeen) {
                exit(1, "JMeter reported an error (see the lines above and the -j log)");
            }
            if (testEnded) {
                // Listeners have closed their files before this line is printed.
                Thread.sleep(200);
                exit(0, null);
            }
            if (!testStarted && !anyThreadNamed("StandardJMeterEngine")) {
                // Give the console a moment in case the line is in flight.
                Thread.sleep(500);
                if (!testStarted && !testEnded) {
                    exit(1, "JMeter did not start the test");
                }
            }
            if (System.currentTimeMillis() > deadline) {
                exit(3, "time limit of " + timeoutSeconds + " s reached, ending JMeter");
            }
            Thread.sleep(200);
        }
    }

    private static boolean isNonGui(String[] args) {
        for (String a : args) {
            if ("-n".equals(a) || "--nongui".equals(a)) {
                return true;
            }
        }
        return false;
    }

    private static void applyCommandLineProperties(String[] args, Properties props) throws Exception {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String kv = null;
            if (a.startsWith("-J") && a.length() > 2) {
                kv = a.substring(2);
            } else if (("-J".equals(a) || "--jmeterproperty".equals(a)) && i + 1 < args.length) {
                kv = args[++i];
            } else if (("-q".equals(a) || "--addprop".equals(a)) && i + 1 < args.length) {
                InputStream in = new FileInputStream(new File(args[++i]));
                try {
                    props.load(in);
                } finally {
                    in.close();
                }
            } else if (("-j".equals(a) || "--jmeterlogfile".equals(a)) && i + 1 < args.length) {
                props.setProperty("log_file", args[++i]);
            } else if (a.startsWith("-q") && a.length() > 2) {
                InputStream in = new FileInputStream(new File(a.substring(2)));
                try {
                    props.load(in);
                } finally {
                    in.close();
                }
            }
            if (kv != null) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    props.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
    }

    /** 2.13: send SaveService's start-up log lines to the -j file, not the console. */
    private static void initLogging(Class<?> utils) {
        try {
            utils.getMethod("initLogging").invoke(null);
        } catch (Exception ignored) {
            // JMeter 3.2+ has no JMeterUtils.initLogging(); nothing to do there.
        }
    }

    private static void allowAllTypes() throws Exception {
        Class<?> saveService = Class.forName("org.apache.jmeter.save.SaveService");
        Class<?> typePermission = Class.forName("com.thoughtworks.xstream.security.TypePermission");
        Object any = Class.forName("com.thoughtworks.xstream.security.AnyTypePermission")
                .getField("ANY").get(null);
        for (String name : new String[] {"JMXSAVER", "JTLSAVER"}) {
            Field f = saveService.getDeclaredField(name);
            f.setAccessible(true);
            Object xstream = f.get(null);
            if (xstream == null) {
                throw new IllegalStateException("SaveService." + name + " is null");
            }
            Method add = xstream.getClass().getMethod("addPermission", typePermission);
            add.invoke(xstream, any);
        }
    }

    private static boolean anyThreadNamed(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && name.equals(t.getName())) {
                return true;
            }
        }
        return false;
    }

    private static void exit(int status, String why) {
        System.out.flush();
        if (why != null) {
            System.err.println("JMeterLauncher: " + why);
        }
        System.err.flush();
        System.exit(status);
    }
}
