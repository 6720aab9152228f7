package main

import (
	"fmt"
	"strconv"

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
		&cli.StringFlag{Name: "storage-compress", Usage: "true | false: the writer's storage.compress (unknown if not given)"},
		&cli.StringFlag{Name: "cache", Usage: "true | false: was the writer's cache enabled (unknown if not given)"},
		&cli.StringFlag{Name: "traffic-recording", Usage: "true | false: the writer's traffic recording (unknown if not given)"},
	}
}

// serverClasspath resolves the server of spawn mode and seed --pristine: --classpath,
// or --evita-version from make evita's cache.
func serverClasspath(cmd *cli.Command, what string) (string, error) {
	if cp := cmd.String("classpath"); cp != "" {
		return cp, nil
	}
	v := cmd.String("evita-version")
	if v == "" {
		return "", fmt.Errorf("%s needs --evita-version V (fetched by make evita EVITA_VERSION=V) or --classpath", what)
	}
	return evitaserver.FetchedClasspath(v)
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

// optBytes reads a size flag; a value that is not a positive size is a usage error.
func optBytes(cmd *cli.Command, name string) (*int64, error) {
	if !cmd.IsSet(name) {
		return nil, nil
	}
	v, err := runfmt.ParseBytes(cmd.String(name))
	if err != nil {
		return nil, usageError(cmd, "--%s: %v", name, err)
	}
	if v <= 0 {
		return nil, usageError(cmd, "--%s %s: a size must be positive", name, cmd.String(name))
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
