package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
)

// Only cmd/warmstat knows the flags: an error built anywhere else must not name one
// (cmd adds the hints). Scans every fmt.Errorf / errors.New format in the packages.
func TestPackagesNameNoFlags(t *testing.T) {
	flag := regexp.MustCompile(`(^|[\s(;,])--[a-z][a-z-]+`)
	var bad []string
	filepath.Walk("../..", func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == "cmd" || info.Name() == "testdata" || strings.HasPrefix(info.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !(sel.Sel.Name == "Errorf" || sel.Sel.Name == "New") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); flag.MatchString(s) {
					bad = append(bad, path+": "+s)
				}
			}
			return true
		})
		return nil
	})
	if len(bad) > 0 {
		t.Fatalf("packages name CLI flags in their errors:\n%s", strings.Join(bad, "\n"))
	}
}

// The ab guide states the sequential false-verdict budget per number of looks exactly as
// analyze spends it (it once stated the three-look rule alone).
func TestREADMESequentialBudget(t *testing.T) {
	readme, err := os.ReadFile("../../docs/ab.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	share := func(minRuns, maxRuns, n int, paired bool) string { // the share of the budget spent at the look after n runs
		p := analyze.SequentialPlan{MinRuns: minRuns, MaxRuns: maxRuns, AlphaPct: 5, Paired: paired}
		return strconv.FormatFloat((1-p.Level(n))/0.05*100, 'f', 0, 64) + " %"
	}
	pf := analyze.SequentialPlan{MinRuns: 2, MaxRuns: 10, Paired: true}
	paired := fmt.Sprintf("A paired series looks first at %d pairs (at 2 its interval has one degree of freedom) and spends %s of the budget there, %s at 4 pairs and the rest evenly after",
		pf.FirstLook(), share(2, 10, 3, true), share(2, 10, 4, true))
	unpaired := "An `--unpaired` series looks from `--min-runs` on and spends " + share(2, 4, 2, false) + " at the first look, " + share(2, 4, 3, false) +
		" at the second, the rest evenly (" + strings.TrimSuffix(share(2, 3, 2, false), " %") + "/" + strings.TrimSuffix(share(2, 3, 3, false), " %") +
		" with two looks, all of it with one)"
	if share(3, 3, 3, false) != "100 %" || share(2, 7, 4, false) != share(2, 7, 7, false) || share(2, 10, 5, true) != share(2, 10, 10, true) {
		t.Fatal("analyze no longer spends the budget as this test describes it")
	}
	for _, want := range []string{paired, unpaired} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/ab.md does not state the budget as analyze spends it; want %q", want)
		}
	}
}

// The layout in docs/development.md is the house's rule: each package on a floor, and a
// package imports only packages on floors below its own. The test reads the table there,
// so the docs cannot drift from the code: every package of the module must stand in it
// once, and every import of ours must point down.
func TestHouseLayers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/warmstat/warmstat/"
	floor := map[string]int{}
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| `([a-z0-9/]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[1])
		if _, dup := floor[m[2]]; dup {
			t.Errorf("docs/development.md: package %s stands twice in the layout", m[2])
		}
		floor[m[2]] = n
	}
	if len(floor) < 10 {
		t.Fatalf("docs/development.md: the layout table has %d rows; the test reads `| floor | `package` | job |` rows", len(floor))
	}
	seen := map[string]bool{}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != "../.." && (n == "testdata" || strings.HasPrefix(n, ".")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		f, ok := floor[rel]
		if !ok {
			t.Errorf("package %s is not in docs/development.md's layout", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if g, ok := floor[dep]; !ok {
				t.Errorf("%s imports %s, which is not in docs/development.md's layout", rel, dep)
			} else if g >= f {
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow up or sideways", rel, f, dep, g)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range floor {
		if !seen[p] {
			t.Errorf("docs/development.md's layout names %s, which is no package of the module", p)
		}
	}
}
