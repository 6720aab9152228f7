package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
