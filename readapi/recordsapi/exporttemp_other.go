//go:build !unix

package recordsapi

import (
	"os"
	"time"
)

// hold, without flock, holds nothing: a sweep goes by the files' age.
func hold(*os.File) (bool, error) { return true, nil }

// left, without flock, reports a file left once it is older than an
// export may take (a live export's file is younger).
func left(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	return time.Since(st.ModTime()) > exportTimeLimit+time.Minute, nil
}
