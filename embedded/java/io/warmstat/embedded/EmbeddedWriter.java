package io.warmstat.embedded;

import io.evitadb.api.CatalogState;
import io.evitadb.api.EvitaSessionContract;
import io.evitadb.api.SessionTraits;
import io.evitadb.api.SessionTraits.SessionFlags;
import io.evitadb.api.configuration.EvitaConfiguration;
import io.evitadb.api.requestResponse.data.mutation.EntityMutation;
import io.evitadb.api.requestResponse.schema.mutation.LocalCatalogSchemaMutation;
import io.evitadb.core.Evita;
import io.evitadb.externalApi.grpc.generated.GrpcUpdateCatalogSchemaRequest;
import io.evitadb.externalApi.grpc.generated.GrpcUpdateEntitySchemaRequest;
import io.evitadb.externalApi.grpc.generated.GrpcUpsertEntityRequest;
import io.evitadb.externalApi.grpc.requestResponse.data.mutation.DelegatingEntityMutationConverter;
import io.evitadb.externalApi.grpc.requestResponse.schema.mutation.DelegatingLocalCatalogSchemaMutationConverter;
import io.evitadb.externalApi.grpc.requestResponse.schema.mutation.catalog.ModifyEntitySchemaMutationConverter;
import io.evitadb.server.EvitaServer;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.SynchronousQueue;

/**
 * warmstat's embedded writer: evitaDB's engine in this JVM, no transport. warmstat (Go)
 * drives it through two pipes (file descriptors 3 and 4, frames below) with the very
 * bytes it would send a remote writer over gRPC; each request is turned into the
 * engine's mutation by evitaDB's own gRPC converters, the ones its server uses, so both
 * target modes apply the same mutation.
 *
 * The engine is configured exactly as the server would be: the arguments are the
 * server's key=value overrides, read by EvitaServer's own configuration parsing (its
 * evita-configuration.yaml), and the engine is opened as EvitaServer.run opens it; the
 * server's external APIs are never started.
 *
 * Frames, big-endian: a request is op (1 byte), length (4), payload; a reply is 'K' or
 * 'E', length (4), payload ('E': the error's class and message, UTF-8). The upsert clock
 * covers conversion and the engine's upsertEntity: parsing the request's bytes is the
 * protocol's share, as it is the server's gRPC layer's in remote mode.
 *
 * Two threads: the main thread reads requests, parses them and writes replies; the
 * applying thread ("warmstat-apply") makes every call into the engine and nothing else,
 * so its own clocks over a load are its upserts' (the engine applies a WARM_UP upsert
 * on its caller's thread). Requests are strictly one at a time: the main thread hands
 * one over and waits for its result.
 *
 * What an upsert's wall time is made of, read on the applying thread: its CPU clock
 * (CLOCK_THREAD_CPUTIME_ID, exact to the ns), the bytes it allocated (the thread's TLAB
 * counter) and the time it waited on the run queue for a CPU (the kernel's schedstat
 * run_delay of the thread). The wall clock is read outermost, so CPU and waiting lie
 * inside it; what is left (wall - CPU - waiting) is time the thread was stopped or
 * blocked: safepoints and GC pauses, I/O, locks.
 */
public final class EmbeddedWriter {
	private final Evita evita;
	private final DataInputStream in;
	private final DataOutputStream out;
	private EvitaSessionContract session;
	private String catalog;
	private final com.sun.management.ThreadMXBean threads =
		(com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
	// the applying thread's schedstat ("cpu_ns run_delay_ns timeslices"), opened by that
	// thread itself (/proc/thread-self names the opener); null where the kernel keeps none
	private FileChannel schedstat;
	private final ByteBuffer schedBuf = ByteBuffer.allocate(128);
	// the request handed to the applying thread, and its result
	private final SynchronousQueue<Task> toApply = new SynchronousQueue<>();
	private final SynchronousQueue<Task> applied = new SynchronousQueue<>();

	/** One request: its op and payload (an upsert's parsed), then its reply or error. */
	private static final class Task {
		final int op;
		final byte[] payload;
		final GrpcUpsertEntityRequest upsert;
		byte[] reply;
		Throwable error;

		Task(int op, byte[] payload, GrpcUpsertEntityRequest upsert) {
			this.op = op;
			this.payload = payload;
			this.upsert = upsert;
		}
	}

	private EmbeddedWriter(Evita evita, DataInputStream in, DataOutputStream out) {
		this.evita = evita;
		this.in = in;
		this.out = out;
	}

	public static void main(String[] args) throws Exception {
		final Map<String, String> options = new LinkedHashMap<>();
		for (String a : args) {
			final int eq = a.indexOf('=');
			if (eq <= 0) {
				throw new IllegalArgumentException("argument without key=value: " + a);
			}
			options.put(a.substring(0, eq), a.substring(eq + 1));
		}
		// as EvitaServer.main: the options are system properties too (the logging setup reads them)
		options.forEach(System::setProperty);
		final DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream("/proc/self/fd/3"), 1 << 16));
		final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream("/proc/self/fd/4"), 1 << 12));
		// the server's own parsing of its configuration and of these overrides; the engine
		// is then opened as EvitaServer.run opens it, and the external APIs never start
		final Evita evita;
		try {
			final EvitaServer server = new EvitaServer(Paths.get(options.getOrDefault("configDir", "")), false, "", options);
			final Field configField = EvitaServer.class.getDeclaredField("evitaConfiguration");
			configField.setAccessible(true);
			evita = openEngine((EvitaConfiguration) configField.get(server));
		} catch (Throwable e) { // said as the hello's error, for warmstat to name; the JVM
			// must end: threads the engine started would keep it up with nothing to serve
			Throwable c = e;
			while (c.getCause() != null && c.getCause() != c) {
				c = c.getCause();
			}
			final String what = e instanceof UnsupportedEngine
				? "UnsupportedEngine: " + e.getMessage()
				: "EngineFailed: " + c.getClass().getName() + ": " + c.getMessage();
			final byte[] msg = what.getBytes(StandardCharsets.UTF_8);
			out.writeByte('E');
			out.writeInt(msg.length);
			out.write(msg);
			out.flush();
			e.printStackTrace(); // into the writer's log, for whoever reads it
			System.exit(5);
			return;
		}
		final EmbeddedWriter w = new EmbeddedWriter(evita, in, out);
		int code = 0;
		try {
			w.reply('K', ("ready " + evita.getClass().getPackage().getImplementationVersion()).getBytes(StandardCharsets.UTF_8));
			w.serve();
		} catch (EOFException e) {
			code = 3; // warmstat went away without saying goodbye
		} catch (InterruptedException e) {
			code = 4;
		} finally {
			if (w.session != null && w.session.isActive()) {
				w.session.close();
			}
			evita.close();
		}
		System.exit(code);
	}

	/**
	 * Opens the engine as the build's own EvitaServer.run does. The lines differ: 2026.2
	 * opens it with (configuration, false, null, null, false), 2026.1 with (configuration,
	 * false); the booleans and callbacks are the server's defaults in both. Found by
	 * reflection, so one source compiles against either line. A build with neither
	 * constructor is refused on a line of its own ("unsupported engine: ..."), which
	 * warmstat reads and names.
	 */
	static Evita openEngine(EvitaConfiguration cfg) throws Exception {
		final Class<?> c = java.util.function.Consumer.class;
		final Object[][] tried = {
			{new Class<?>[]{EvitaConfiguration.class, boolean.class, c, c, boolean.class}, new Object[]{cfg, false, null, null, false}},
			{new Class<?>[]{EvitaConfiguration.class, boolean.class}, new Object[]{cfg, false}},
		};
		for (Object[] t : tried) {
			final java.lang.reflect.Constructor<Evita> ctor;
			try {
				ctor = Evita.class.getConstructor((Class<?>[]) t[0]);
			} catch (NoSuchMethodException e) {
				continue;
			}
			try {
				return ctor.newInstance((Object[]) t[1]);
			} catch (java.lang.reflect.InvocationTargetException e) {
				throw e.getCause() instanceof Exception x ? x : e;
			}
		}
		throw new UnsupportedEngine("Evita has neither (EvitaConfiguration, boolean, Consumer, Consumer, boolean) (2026.2) nor (EvitaConfiguration, boolean) (2026.1)");
	}

	/** The build offers no entry point this writer knows. */
	static final class UnsupportedEngine extends Exception {
		UnsupportedEngine(String what) {
			super(what);
		}
	}

	private void serve() throws IOException, InterruptedException {
		final Thread applier = new Thread(this::apply, "warmstat-apply");
		applier.setDaemon(true);
		applier.start();
		while (true) {
			final int op = in.readUnsignedByte();
			final byte[] payload = new byte[in.readInt()];
			in.readFully(payload);
			GrpcUpsertEntityRequest upsert = null;
			if (op == 'U') { // parsing the request is the protocol's share, outside the upsert
				try {
					upsert = GrpcUpsertEntityRequest.parseFrom(payload);
				} catch (IOException e) {
					reply('E', ("InvalidProtocolBufferException: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
					continue;
				}
			}
			final Task t = new Task(op, payload, upsert);
			toApply.put(t);
			applied.take();
			if (t.error != null) {
				Throwable c = t.error;
				while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
					c = c.getCause();
				}
				reply('E', (c.getClass().getSimpleName() + ": " + c.getMessage()).getBytes(StandardCharsets.UTF_8));
			} else {
				reply('K', t.reply);
			}
			if (op == 'Q') {
				return;
			}
		}
	}

	/** The applying thread: every call into the engine, one task at a time. */
	private void apply() {
		schedstat = openSchedstat();
		try {
			while (true) {
				final Task t = toApply.take();
				try {
					t.reply = handle(t);
				} catch (Throwable e) {
					t.error = e;
				}
				applied.put(t);
				if (t.op == 'Q') {
					return;
				}
			}
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}

	private byte[] handle(Task t) throws Exception {
		final int op = t.op;
		final byte[] payload = t.payload;
		switch (op) {
			case 'Q': { // goodbye: the session closed, the engine closed by main
				if (session != null && session.isActive()) {
					session.close();
				}
				session = null;
				return new byte[0];
			}
			case 'S': { // catalog state: "" when the catalog is unknown
				return evita.getCatalogState(utf8(payload)).map(CatalogState::name).orElse("").getBytes(StandardCharsets.UTF_8);
			}
			case 'R': { // remove a catalog
				evita.deleteCatalogIfExistsWithProgress(utf8(payload)).ifPresent(p -> p.onCompletion().toCompletableFuture().join());
				return new byte[0];
			}
			case 'D': { // define a catalog (it starts WARMING_UP)
				evita.defineCatalog(utf8(payload));
				return new byte[0];
			}
			case 'O': { // open the session: catalog NUL w|r
				final String p = utf8(payload);
				final int nul = p.indexOf('\0');
				if (session != null && session.isActive()) {
					throw new IllegalStateException("a session is already open on " + catalog);
				}
				catalog = p.substring(0, nul);
				session = p.charAt(nul + 1) == 'w'
					? evita.createSession(new SessionTraits(catalog, SessionFlags.READ_WRITE))
					: evita.createSession(new SessionTraits(catalog));
				return new byte[0];
			}
			case 'X': { // close the session
				if (session != null && session.isActive()) {
					session.close();
				}
				session = null;
				return new byte[0];
			}
			case 'C': { // catalog schema mutations (GrpcUpdateCatalogSchemaRequest)
				final LocalCatalogSchemaMutation[] ms = GrpcUpdateCatalogSchemaRequest.parseFrom(payload).getSchemaMutationsList().stream()
					.map(DelegatingLocalCatalogSchemaMutationConverter.INSTANCE::convert)
					.toArray(LocalCatalogSchemaMutation[]::new);
				open().updateCatalogSchema(ms);
				return new byte[0];
			}
			case 'E': { // define an entity schema
				open().defineEntitySchema(utf8(payload));
				return new byte[0];
			}
			case 'M': { // an entity schema's mutations (GrpcUpdateEntitySchemaRequest)
				open().updateEntitySchema(ModifyEntitySchemaMutationConverter.INSTANCE.convert(
					GrpcUpdateEntitySchemaRequest.parseFrom(payload).getSchemaMutation()));
				return new byte[0];
			}
			case 'U': { // one upsert (GrpcUpsertEntityRequest): the reply is its cost (32 bytes)
				final GrpcUpsertEntityRequest req = t.upsert;
				final EvitaSessionContract s = open();
				final long t0 = System.nanoTime();
				final long c0 = threads.getCurrentThreadCpuTime();
				final long a0 = threads.getCurrentThreadAllocatedBytes();
				final long w0 = runDelay();
				final EntityMutation m = DelegatingEntityMutationConverter.INSTANCE.convert(req.getEntityMutation());
				s.upsertEntity(m);
				final long w1 = runDelay();
				final long a1 = threads.getCurrentThreadAllocatedBytes();
				final long c1 = threads.getCurrentThreadCpuTime();
				final long t1 = System.nanoTime();
				final byte[] cost = new byte[32]; // wall, CPU, allocated bytes, run-queue wait (-1: unknown)
				put8(cost, 0, t1 - t0);
				put8(cost, 8, c0 < 0 || c1 < 0 ? -1 : c1 - c0);
				put8(cost, 16, a0 < 0 || a1 < 0 ? -1 : a1 - a0);
				put8(cost, 24, w0 < 0 || w1 < 0 ? -1 : w1 - w0);
				return cost;
			}
			case 'T': { // the applying thread's counters, for the load window: tid, CPU ns,
				// allocated bytes, run-queue wait ns
				final byte[] b = new byte[32];
				put8(b, 0, threadId());
				put8(b, 8, threads.getCurrentThreadCpuTime());
				put8(b, 16, threads.getCurrentThreadAllocatedBytes());
				put8(b, 24, runDelay());
				return b;
			}
			case 'G': { // goLive and close: the reply is its ns
				final EvitaSessionContract s = open();
				final long t0 = System.nanoTime();
				try {
					s.goLiveAndCloseWithProgress().onCompletion().toCompletableFuture().get();
				} finally {
					session = null;
				}
				return long8(System.nanoTime() - t0);
			}
			case 'N': { // a collection's entity count
				return long8(open().getEntityCollectionSize(utf8(payload)));
			}
			default:
				throw new IllegalArgumentException("unknown op " + op);
		}
	}

	private EvitaSessionContract open() {
		if (session == null || !session.isActive()) {
			throw new IllegalStateException("no open session");
		}
		return session;
	}

	private void reply(int status, byte[] payload) throws IOException {
		out.writeByte(status);
		out.writeInt(payload.length);
		out.write(payload);
		out.flush();
	}

	private static String utf8(byte[] b) {
		return new String(b, StandardCharsets.UTF_8);
	}

	private static byte[] long8(long v) {
		final byte[] b = new byte[8];
		put8(b, 0, v);
		return b;
	}

	private static void put8(byte[] b, int at, long v) {
		for (int i = at + 7; i >= at; i--) {
			b[i] = (byte) v;
			v >>>= 8;
		}
	}

	private static FileChannel openSchedstat() {
		try {
			return FileChannel.open(Paths.get("/proc/thread-self/schedstat"));
		} catch (IOException | UnsupportedOperationException | SecurityException e) {
			return null;
		}
	}

	/** This thread's run-queue wait so far, in ns (schedstat's second field); -1 unknown. */
	private long runDelay() {
		if (schedstat == null) {
			return -1;
		}
		try {
			schedBuf.clear();
			final int n = schedstat.read(schedBuf, 0);
			long v = 0;
			int field = 0;
			for (int i = 0; i < n; i++) {
				final byte c = schedBuf.get(i);
				if (c == ' ') {
					if (++field == 2) {
						return v;
					}
					v = 0;
				} else if (c >= '0' && c <= '9') {
					v = v * 10 + (c - '0');
				} else {
					return -1;
				}
			}
			return -1;
		} catch (IOException e) {
			return -1;
		}
	}

	/** This thread's id as the kernel knows it (/proc/thread-self is PID/task/TID); -1 unknown. */
	private static long threadId() {
		try {
			final Path p = Files.readSymbolicLink(Paths.get("/proc/thread-self"));
			return Long.parseLong(p.getFileName().toString());
		} catch (IOException | RuntimeException e) {
			return -1;
		}
	}
}
