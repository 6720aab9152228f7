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
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

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
 */
public final class EmbeddedWriter {
	private final Evita evita;
	private final DataInputStream in;
	private final DataOutputStream out;
	private EvitaSessionContract session;
	private String catalog;

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
		final EvitaServer server = new EvitaServer(Paths.get(options.getOrDefault("configDir", "")), false, "", options);
		final Field configField = EvitaServer.class.getDeclaredField("evitaConfiguration");
		configField.setAccessible(true);
		final Evita evita = new Evita((EvitaConfiguration) configField.get(server), false, null, null, false);
		final EmbeddedWriter w = new EmbeddedWriter(evita, in, out);
		int code = 0;
		try {
			w.reply('K', ("ready " + evita.getClass().getPackage().getImplementationVersion()).getBytes(StandardCharsets.UTF_8));
			w.serve();
		} catch (EOFException e) {
			code = 3; // warmstat went away without saying goodbye
		} finally {
			if (w.session != null && w.session.isActive()) {
				w.session.close();
			}
			evita.close();
		}
		System.exit(code);
	}

	private void serve() throws IOException {
		while (true) {
			final int op = in.readUnsignedByte();
			final byte[] payload = new byte[in.readInt()];
			in.readFully(payload);
			if (op == 'Q') {
				if (session != null && session.isActive()) {
					session.close();
				}
				session = null;
				reply('K', new byte[0]);
				return;
			}
			try {
				reply('K', handle(op, payload));
			} catch (Throwable t) {
				Throwable c = t;
				while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
					c = c.getCause();
				}
				reply('E', (c.getClass().getSimpleName() + ": " + c.getMessage()).getBytes(StandardCharsets.UTF_8));
			}
		}
	}

	private byte[] handle(int op, byte[] payload) throws Exception {
		switch (op) {
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
			case 'U': { // one upsert (GrpcUpsertEntityRequest): the reply is its ns
				final GrpcUpsertEntityRequest req = GrpcUpsertEntityRequest.parseFrom(payload);
				final EvitaSessionContract s = open();
				final long t0 = System.nanoTime();
				final EntityMutation m = DelegatingEntityMutationConverter.INSTANCE.convert(req.getEntityMutation());
				s.upsertEntity(m);
				return long8(System.nanoTime() - t0);
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
		for (int i = 7; i >= 0; i--) {
			b[i] = (byte) v;
			v >>>= 8;
		}
		return b;
	}
}
