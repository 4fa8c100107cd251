package api

import (
	"net/http"
	"runtime"
	"runtime/debug"
)

// Version is what a kpool binary says of itself: the answer of GET
// /version and what kpool version prints, so that a client and its server
// can be compared.
type Version struct {
	// Version is the module version, "(devel)" when the binary was not
	// built from a tagged module.
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from (with
	// "-dirty" when the work tree had changes), "" when not stamped.
	Commit string `json:"commit"`
	// Go is the Go version the binary was built with.
	Go string `json:"go"`
}

// BuildVersion returns this binary's version from its build information.
func BuildVersion() Version {
	v := Version{Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.Commit != "" {
		v.Commit += "-dirty"
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	return v
}

// version answers GET /version. It takes no authentication: it tells a
// client which server it talks to (and that it is kpool at all).
func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, BuildVersion())
}
