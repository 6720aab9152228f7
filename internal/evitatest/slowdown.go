package evitatest

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A slowdown is a synthetic regression of the real server: a Java agent that rewrites
// evitaDB's gRPC upsert converter (EntityUpsertMutationConverter.convert, which the
// server and warmstat's embedded writer both call for every upsert) so that every
// Product upsert first spins on the CPU, or parks its thread, for a fixed time. A spin
// costs CPU time; a park costs only wall time — the two kinds of regression a CPU
// clock does and does not see.
type Slowdown string

const (
	Spin Slowdown = "spin"
	Park Slowdown = "park"
)

const slowAgentJava = `import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.security.ProtectionDomain;
import java.util.concurrent.locks.LockSupport;
import jdk.internal.org.objectweb.asm.*;

public class SlowAgent {
    static final String CONVERTER = "io/evitadb/externalApi/grpc/requestResponse/data/mutation/EntityUpsertMutationConverter";
    static final String FROM_GRPC = "(Lio/evitadb/externalApi/grpc/generated/GrpcEntityUpsertMutation;)";
    static volatile boolean spin;
    static volatile long nanos;
    static volatile Method entityType;
    static volatile long sink;

    public static void premain(String args, Instrumentation inst) {
        String[] a = args.split(":");
        spin = "spin".equals(a[0]);
        nanos = Long.parseLong(a[1]) * 1000L;
        inst.addTransformer(new ClassFileTransformer() {
            @Override
            public byte[] transform(ClassLoader l, String name, Class<?> c, ProtectionDomain d, byte[] b) {
                if (!CONVERTER.equals(name)) {
                    return null;
                }
                try {
                    ClassReader reader = new ClassReader(b);
                    ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
                    reader.accept(new ClassVisitor(Opcodes.ASM8, writer) {
                        @Override
                        public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] ex) {
                            MethodVisitor mv = super.visitMethod(access, m, desc, sig, ex);
                            if (!"convert".equals(m) || !desc.startsWith(FROM_GRPC)) {
                                return mv;
                            }
                            return new MethodVisitor(Opcodes.ASM8, mv) {
                                @Override
                                public void visitCode() {
                                    super.visitCode();
                                    super.visitVarInsn(Opcodes.ALOAD, 1);
                                    super.visitMethodInsn(Opcodes.INVOKESTATIC, "SlowAgent", "slow", "(Ljava/lang/Object;)V", false);
                                }
                            };
                        }
                    }, 0);
                    return writer.toByteArray();
                } catch (Throwable e) {
                    e.printStackTrace();
                    Runtime.getRuntime().halt(70); // a server that cannot be slowed must not pass for a fast one
                    return null;
                }
            }
        });
    }

    public static void slow(Object mutation) throws Exception {
        Method m = entityType;
        if (m == null) {
            entityType = m = mutation.getClass().getMethod("getEntityType");
        }
        if (!"Product".equals(m.invoke(mutation))) {
            return;
        }
        long end = System.nanoTime() + nanos;
        if (spin) {
            long x = 1;
            while (System.nanoTime() < end) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            sink += x;
            return;
        }
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
`

// SlowdownOptions are the writer JVM options that load the slowdown agent: every
// Product upsert spins or parks for micros µs first. The agent's jar is built once per
// test (javac, a few seconds) in a directory of the test's.
func SlowdownOptions(t testing.TB, kind Slowdown, micros int) []string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "SlowAgent.java")
	if err := os.WriteFile(src, []byte(slowAgentJava), 0o644); err != nil {
		t.Fatal(err)
	}
	const asm = "java.base/jdk.internal.org.objectweb.asm"
	classes := filepath.Join(dir, "classes")
	if out, err := exec.Command("javac", "--add-exports", asm+"=ALL-UNNAMED", "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac SlowAgent: %v\n%s", err, out)
	}
	jar := filepath.Join(dir, "slow-agent.jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, _ := z.Create("META-INF/MANIFEST.MF")
	fmt.Fprintf(w, "Manifest-Version: 1.0\r\nPremain-Class: SlowAgent\r\n\r\n")
	entries, _ := filepath.Glob(filepath.Join(classes, "*.class"))
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := z.Create(filepath.Base(e))
		w.Write(b)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return []string{"--add-exports=" + asm + "=ALL-UNNAMED", fmt.Sprintf("-javaagent:%s=%s:%d", jar, kind, micros)}
}
