package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/warmstat/warmstat/base/staging"
	"github.com/warmstat/warmstat/seed"
)

var numberList = regexp.MustCompile(`\[[\s0-9.eE+,-]+\]`)

// Write saves a shape as indented JSON at path, which must not exist: a shape file is
// never written over (it may be the only record of a catalog that is gone). The file
// appears whole or not at all.
func Write(path string, p *seed.Profile) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: a shape file is never overwritten (choose another path, or remove it)", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	b = numberList.ReplaceAllFunc(b, func(m []byte) []byte { // a distribution's quantiles on one line
		return append(append([]byte("["), bytes.Join(bytes.Fields(bytes.ReplaceAll(m[1:len(m)-1], []byte(","), []byte(" "))), []byte(", "))...), ']')
	})
	f, err := os.CreateTemp(filepath.Dir(path), staging.Pattern(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path) // fails, rather than replaces, if path appeared meanwhile
	}
	os.Remove(tmp)
	return err
}
