# java.sh — a JVM under wall-clock sampling at 1000 Hz (its threads wait
# in pthread locks and condition variables, which meminst wraps): the
# wrapper of a contended lock walked the stack with libunwind, whose own
# contended lock walked again, to a stack overflow (the JVM died by
# SIGSEGV in 4 runs of 4).  A small program run by the source launcher
# (java File.java) must print what it prints bare, with the same status,
# in three runs, and leave traces.
. "$top_srcdir/tests/sample/sample_lib.sh"
mi_need /usr/bin/java default-jre-headless

cat >"$MI_TMP/J.java" <<'JAVA'
public class J {
	public static void main(String[] a) throws Exception {
		java.util.List<String> l = new java.util.ArrayList<>();
		for (int i = 0; i < 200000; i++)
			l.add("x" + i);
		Thread t = new Thread(() -> System.out.println("thread"));
		t.start();
		t.join();
		System.out.println(l.size());
	}
}
JAVA
jv() { (cd "$MI_TMP" && mi_x /usr/bin/java J.java); }
mi_reference java jv || mi_finish
for run in 1 2 3; do
	mi_case "java, wall-clock sampling at 1000 Hz, run $run" \
		"off,sample=1000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace" jv
done
ls "$MI_TMP"/t.*.trace >/dev/null 2>&1 && mi_ok "the runs left traces" || mi_fail "the runs left traces" "none"
mi_finish
