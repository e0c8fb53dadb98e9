package boundkey

import (
	"os"
	"path/filepath"
)

// writeNew writes content to a new file at path (mode 0600, its directory
// made 0700 if missing), failing with an error wrapping os.ErrExist if
// there is one. The file appears whole: it is written under a temporary
// name and linked into place, so a process that finds it never reads it
// half-written, and of two processes writing it at once one wins.
func writeNew(path string, content []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}
