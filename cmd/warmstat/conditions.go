package main

import (
	"cmp"
	"errors"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// conditionFlags are the measurement conditions a server cannot report about itself;
// import and load take them the same way. Not given = recorded as unknown.
func conditionFlags(serverHeapUsage, readerHeapUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "server-heap", Usage: serverHeapUsage},
		&cli.StringFlag{Name: "reader-heap", Usage: readerHeapUsage},
		&cli.StringFlag{Name: "storage-compress", Usage: "true | false: the writer's storage.compress (not given: true in spawn mode and ab, which set it; unknown in attach mode and import)"},
		&cli.StringFlag{Name: "cache", Usage: "true | false: was the writer's cache enabled (unknown if not given)"},
		&cli.StringFlag{Name: "traffic-recording", Usage: "true | false: the writer's traffic recording (unknown if not given)"},
	}
}

// serverFlags name the server build spawn mode and seed --pristine start; exactly one.
func serverFlags(what string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "evita-version", Usage: what + ": an evitaDB release fetched by make evita (EVITA_VERSION=V)"},
		&cli.StringFlag{Name: "classpath", Usage: what + ": the server's classpath (jars separated by ':')"},
		&cli.StringFlag{Name: "server-jar", Usage: what + ": a runnable server jar (java -jar), e.g. a release's evita-server.jar"},
		&cli.StringFlag{Name: "evita-home", Usage: what + ": an evitaDB checkout whose " + evitaserver.CheckoutJar + " is built from its HEAD"},
	}
}

// serverSources are the server flags, each with the source form ab's --a/--b write.
var serverSources = []struct{ flag, kind string }{
	{"evita-version", "release"}, {"classpath", "classpath"}, {"server-jar", "jar"}, {"evita-home", "checkout"},
}

// serverSource resolves the one server flag given, in the forms ab's --a/--b take
// (a "~" is expanded: --evita-home=~/src reaches us as typed).
func serverSource(cmd *cli.Command, what string) (evitaserver.Source, error) {
	var set, spec []string
	for _, s := range serverSources {
		if v := cmd.String(s.flag); v != "" {
			set, spec = append(set, "--"+s.flag), append(spec, s.kind+":"+v)
		}
	}
	switch len(set) {
	case 0:
		return evitaserver.Source{}, usageError(cmd, "%s needs a server: --evita-version V (fetched by make evita EVITA_VERSION=V), --classpath CP, --server-jar FILE or --evita-home CHECKOUT", what)
	case 1:
		return evitaserver.ParseSource(spec[0])
	}
	return evitaserver.Source{}, usageError(cmd, "%s takes one server, got %s", what, strings.Join(set, " and "))
}

// conditions holds the parsed condition flags.
type conditions struct {
	serverHeap, readerHeap  *int64
	compress, cache, record *bool
}

func parseConditions(cmd *cli.Command) (conditions, error) {
	var c conditions
	var e [5]error
	c.serverHeap, e[0] = optBytes(cmd, "server-heap")
	c.readerHeap, e[1] = optBytes(cmd, "reader-heap")
	c.compress, e[2] = optBool(cmd, "storage-compress")
	c.cache, e[3] = optBool(cmd, "cache")
	c.record, e[4] = optBool(cmd, "traffic-recording")
	return c, cmp.Or(e[:]...) // the first flag in error, as the flags are listed
}

// apply records the conditions in a manifest.
func (c conditions) apply(m *runfmt.Manifest) {
	m.Server.MaxHeapBytes, m.Reader.MaxHeapBytes = c.serverHeap, c.readerHeap
	m.Conditions.StorageCompress, m.Conditions.CacheEnabled, m.Conditions.TrafficRecording = c.compress, c.cache, c.record
}

// optBytes reads a size flag (runfmt.ParseHeapSize): what cannot be a heap is a
// usage error.
func optBytes(cmd *cli.Command, name string) (*int64, error) {
	if !cmd.IsSet(name) {
		return nil, nil
	}
	v, err := runfmt.ParseHeapSize(cmd.String(name))
	var bad *runfmt.SizeError
	switch {
	case errors.As(err, &bad):
		return nil, usageError(cmd, "--%s %s: %s", name, bad.Value, bad.Msg)
	case err != nil:
		return nil, usageError(cmd, "--%s: %v", name, err)
	}
	return &v, nil
}

func optBool(cmd *cli.Command, name string) (*bool, error) {
	if !cmd.IsSet(name) {
		return nil, nil
	}
	v, err := strconv.ParseBool(cmd.String(name))
	if err != nil {
		return nil, usageError(cmd, "--%s: %q is not true or false", name, cmd.String(name))
	}
	return &v, nil
}
