package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/history"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/shape"
	"github.com/warmstat/warmstat/workload"
)

// damagedFile is one kind of file warmstat writes and reads back: made valid by its
// package's own writer, and read by the reader the commands use.
type damagedFile struct {
	kind string
	make func(t *testing.T, dir string) (path string, read func() error)
}

// Every kind of file warmstat reads, damaged as a disk, a crash or a careless edit
// damages it — a NUL and garbage after the document, a second document appended, the
// file cut in the middle — is refused with its path named, and reading it leaves its
// bytes as they were. The same file whole still reads, before and after.
func TestDamagedFilesAreRefused(t *testing.T) {
	damages := []struct {
		name  string
		apply func([]byte) []byte
	}{
		{"a NUL and garbage appended", func(b []byte) []byte { return append(bytes.Clone(b), "\x00{garbage"...) }},
		{"a second document appended", func(b []byte) []byte { return append(bytes.Clone(b), b...) }},
		{"cut in the middle", func(b []byte) []byte { return bytes.Clone(b[:len(b)/2]) }},
	}
	for _, k := range damagedFileKinds() {
		t.Run(k.kind, func(t *testing.T) {
			path, read := k.make(t, t.TempDir())
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := read(); err != nil {
				t.Fatalf("the valid file: %v", err)
			}
			for _, d := range damages {
				damaged := d.apply(good)
				if err := os.WriteFile(path, damaged, 0o644); err != nil {
					t.Fatal(err)
				}
				err := read()
				if err == nil {
					t.Errorf("%s: read without complaint", d.name)
				} else if !strings.Contains(err.Error(), path) {
					t.Errorf("%s: the refusal does not name %s: %v", d.name, path, err)
				} else {
					t.Logf("%s: %v", d.name, err)
				}
				if now, _ := os.ReadFile(path); !bytes.Equal(now, damaged) {
					t.Errorf("%s: reading changed the file", d.name)
				}
			}
			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := read(); err != nil {
				t.Fatalf("the valid file again: %v", err)
			}
		})
	}
}

func damagedFileKinds() []damagedFile {
	return []damagedFile{
		{"manifest", func(t *testing.T, dir string) (string, func() error) {
			run := synthRun(t, dir)
			path := filepath.Join(run, runfmt.ManifestFile)
			return path, func() error { _, err := runfmt.ReadManifest(path); return err }
		}},
		{"series state", func(t *testing.T, dir string) (string, func() error) {
			s := &series.State{Schema: series.Schema, Plan: series.Plan{Catalog: "shop", MinRuns: 6, MaxRuns: 12}}
			must(t, runfmt.WriteJSONAtomic(filepath.Join(dir, series.File), s)) // what the series saves after every change
			return filepath.Join(dir, series.File), func() error { _, err := series.Read(dir); return err }
		}},
		{"bisect state", func(t *testing.T, dir string) (string, func() error) {
			s := &bisect.State{Schema: bisect.Schema, Plan: bisect.Plan{Good: "aaaa", Bad: "bbbb"}}
			must(t, s.Save(dir))
			return filepath.Join(dir, bisect.File), func() error { _, err := bisect.Read(dir); return err }
		}},
		{"history store", func(t *testing.T, dir string) (string, func() error) {
			hist := synthHistory(t, dir)
			return filepath.Join(hist, "history.json"), func() error { _, err := history.Open(hist, false); return err }
		}},
		{"history point", func(t *testing.T, dir string) (string, func() error) {
			hist := synthHistory(t, dir)
			st, err := history.Open(hist, false)
			must(t, err)
			points, err := st.Points()
			must(t, err)
			return points[0].File(), func() error { _, err := st.Points(); return err }
		}},
		{"history confirmation", func(t *testing.T, dir string) (string, func() error) {
			hist := synthHistory(t, dir)
			st, err := history.Open(hist, false)
			must(t, err)
			must(t, st.SaveConfirmation(history.Confirmation{Line: "l1", Metric: "mean", Before: history.Build{Commit: "aaaaaaaaaaaa"},
				After: history.Build{Commit: "bbbbbbbbbbbb"}, Series: "s", At: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}))
			files, _ := filepath.Glob(filepath.Join(hist, "confirmations", "l1", "*.json"))
			if len(files) != 1 {
				t.Fatalf("confirmation files %v", files)
			}
			return files[0], func() error { _, err := st.Confirmations("l1"); return err }
		}},
		{"shape", func(t *testing.T, dir string) (string, func() error) {
			path := filepath.Join(dir, "shop.shape.json")
			must(t, shape.Write(path, seed.DefaultProfile()))
			return path, func() error { _, err := seed.LoadProfile(path); return err }
		}},
		{"workload", func(t *testing.T, dir string) (string, func() error) {
			path := filepath.Join(dir, "shop.workload")
			synthWorkload(t, path)
			return path, func() error { _, err := workload.Verify(path); return err }
		}},
		{"snapshot metadata", func(t *testing.T, dir string) (string, func() error) {
			must(t, evitaserver.WriteSnapshot(dir, &evitaserver.Snapshot{Catalog: "shop", Created: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
				Entities: 10, Counts: map[string]int{"Product": 10}}))
			return evitaserver.SnapshotFile(dir, "shop"), func() error { _, err := evitaserver.ReadSnapshot(dir, "shop"); return err }
		}},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func synthRun(t *testing.T, dir string) string {
	t.Helper()
	run := filepath.Join(dir, "run")
	if _, err := synthrun.Write(run, synthrun.Spec{Label: "a", Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return run
}

// synthHistory is a history of one synthetic run, made by history's own Add.
func synthHistory(t *testing.T, dir string) string {
	t.Helper()
	run, err := runfmt.Open(synthRun(t, dir))
	must(t, err)
	order := 1
	p, err := history.PointOf(context.Background(), run, history.Placement{Order: &order, Ref: "jar:/builds/a.jar"})
	must(t, err)
	hist := filepath.Join(dir, "history")
	st, err := history.Open(hist, true)
	must(t, err)
	_, err = st.Add([]history.Point{p}, time.Now())
	must(t, err)
	return hist
}

// synthWorkload is a workload file of one collection of three entities.
func synthWorkload(t *testing.T, path string) {
	t.Helper()
	h := workload.Header{Catalog: "shop", SourceMode: "attach", SourceCounts: map[string]int64{"Product": 3},
		Fingerprint: "counts-sha256:x", Collections: []string{"Product"}, BatchSize: 1000}
	w, err := workload.Create(path, h, &pb.GrpcCatalogSchema{Name: "shop"}, []*pb.GrpcEntitySchema{{Name: "Product"}})
	must(t, err)
	must(t, w.Begin("Product", 3))
	for pk := range int32(3) {
		must(t, w.Entity(pk+1, []byte("an upsert request")))
	}
	must(t, w.End(1000, 2000))
	must(t, w.Close())
}
