package main

import (
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

// serverSource resolves the one server flag given.
func serverSource(cmd *cli.Command, what string) (evitaserver.Source, error) {
	var set []string
	for _, f := range []string{"evita-version", "classpath", "server-jar", "evita-home"} {
		if cmd.String(f) != "" {
			set = append(set, "--"+f)
		}
	}
	switch len(set) {
	case 0:
		return evitaserver.Source{}, usageError(cmd, "%s needs a server: --evita-version V (fetched by make evita EVITA_VERSION=V), --classpath CP, --server-jar FILE or --evita-home CHECKOUT", what)
	case 1:
	default:
		return evitaserver.Source{}, usageError(cmd, "%s takes one server, got %s", what, strings.Join(set, " and "))
	}
	// the same forms as ab's --a/--b (a "~" is expanded: --evita-home=~/src reaches us as typed)
	switch {
	case cmd.String("evita-version") != "":
		return evitaserver.ParseSource("release:" + cmd.String("evita-version"))
	case cmd.String("classpath") != "":
		return evitaserver.ParseSource("classpath:" + cmd.String("classpath"))
	case cmd.String("server-jar") != "":
		return evitaserver.ParseSource("jar:" + cmd.String("server-jar"))
	}
	return evitaserver.ParseSource("checkout:" + cmd.String("evita-home"))
}

// conditions holds the parsed condition flags.
type conditions struct {
	serverHeap, readerHeap  *int64
	compress, cache, record *bool
}

func parseConditions(cmd *cli.Command) (conditions, error) {
	var c conditions
	var err error
	if c.serverHeap, err = optBytes(cmd, "server-heap"); err != nil {
		return c, err
	}
	if c.readerHeap, err = optBytes(cmd, "reader-heap"); err != nil {
		return c, err
	}
	if c.compress, err = optBool(cmd, "storage-compress"); err != nil {
		return c, err
	}
	if c.cache, err = optBool(cmd, "cache"); err != nil {
		return c, err
	}
	c.record, err = optBool(cmd, "traffic-recording")
	return c, err
}

// apply records the conditions in a manifest.
func (c conditions) apply(m *runfmt.Manifest) {
	m.Server.MaxHeapBytes, m.Reader.MaxHeapBytes = c.serverHeap, c.readerHeap
	m.Conditions.StorageCompress, m.Conditions.CacheEnabled, m.Conditions.TrafficRecording = c.compress, c.cache, c.record
}

// optBytes reads a size flag; a value that is not a positive size is a usage error,
// and so is a size without a unit: "--server-heap 1.5" means 1.5 GiB to a person and
// 1 byte to a parser, so neither is guessed.
func optBytes(cmd *cli.Command, name string) (*int64, error) {
	if !cmd.IsSet(name) {
		return nil, nil
	}
	raw := strings.TrimSpace(cmd.String(name))
	v, err := runfmt.ParseBytes(raw)
	if err != nil {
		return nil, usageError(cmd, "--%s: %v", name, err)
	}
	if v <= 0 {
		return nil, usageError(cmd, "--%s %s: a size must be positive", name, cmd.String(name))
	}
	if last := raw[len(raw)-1]; last >= '0' && last <= '9' || last == '.' {
		return nil, usageError(cmd, "--%s %s: give the size with its unit (k, m, g or t: 1536m, 1.5g)", name, raw)
	}
	if v < 2<<20 { // every size flag is a heap or a machine's memory
		return nil, usageError(cmd, "--%s %s: below 2m, the smallest heap a JVM takes", name, raw)
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
