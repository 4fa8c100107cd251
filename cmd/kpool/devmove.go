package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/service"
)

// The emulators listen on new ports at every run of kpool dev: the
// clusters on the previous run's emulators (the demo ones and those users
// registered with --endpoint) are moved to this run's, so that their
// pools carry on.

// devEmulatorsFile records where kpool dev's emulators listened, so that
// the next run knows which clusters were on them.
func devEmulatorsFile(database string) string {
	return filepath.Join(devFolder(database), devStem(database)+"-emulators.json")
}

// emulatorRecord is what devEmulatorsFile holds: by platform, the
// emulators' origins clusters may still point at (the last run's, and any
// earlier one a cluster could not be moved from).
type emulatorRecord struct {
	Emulators map[kpool.PlatformType][]string `json:"emulators"`
}

// readEmulatorRecord reads the record; nil without error when there is
// none (a first run, or one before kpool dev kept it).
func readEmulatorRecord(file string) (*emulatorRecord, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kpool dev: %w", err)
	}
	var r emulatorRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("kpool dev: %s: %w (delete the file: kpool dev then moves the clusters it finds on loopback)", file, err)
	}
	return &r, nil
}

// writeEmulatorRecord writes r (origins only: no secret) to file.
func writeEmulatorRecord(file string, r *emulatorRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err == nil {
		err = os.WriteFile(file, append(b, '\n'), 0o644)
	}
	if err != nil {
		return fmt.Errorf("kpool dev: recording the emulators' addresses: %w", err)
	}
	return nil
}

// emulatorOrigins are this run's emulators' origins, by platform.
func emulatorOrigins(emu *cloudsim.Running) map[kpool.PlatformType]string {
	out := map[kpool.PlatformType]string{}
	for _, s := range emu.Emulators {
		t, _ := s.Emulator.Identity()
		if o, err := kpool.Origin(s.URL); err == nil {
			out[t] = o
		}
	}
	return out
}

// devMove is a cluster kpool dev moved to this run's emulator, or failed
// to (Err).
type devMove struct {
	ID, Name, Owner, From, To string
	Platform                  kpool.PlatformType
	Err                       error
}

// emulatorMover decides which clusters are on an earlier run's emulator
// and moves them to this run's.
type emulatorMover struct {
	// now are this run's emulators' origins by platform.
	now map[kpool.PlatformType]string
	// before is the record of the earlier runs; nil when there is none,
	// when clusters on loopback, at no origin in allowed (the operator's
	// --allowed-endpoints), are taken to be on the emulators.
	before  *emulatorRecord
	allowed []string
}

// from returns the origin of c's endpoint when c is on an earlier run's
// emulator of its platform, else "".
func (m *emulatorMover) from(c *kpool.Cluster) string {
	t := c.Spec.Platform.Type
	o, err := kpool.Origin(c.Spec.Endpoint)
	if err != nil || m.now[t] == "" || o == m.now[t] || c.Deleting() {
		return ""
	}
	if m.before != nil {
		if slices.Contains(m.before.Emulators[t], o) {
			return o
		}
		return ""
	}
	u, _ := url.Parse(o)
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		if !slices.Contains(m.allowed, o) {
			return o
		}
	}
	return ""
}

// move points every cluster on an earlier run's emulator at this run's
// emulator of its platform, as the cluster's owner (whose grant of the
// emulator's identity it keeps). It returns what it did, and the record
// to keep: this run's origins and those a cluster is still on.
func (m *emulatorMover) move(ctx context.Context, svc *service.Service) ([]devMove, *emulatorRecord, error) {
	all := kpool.WithIdentity(ctx, &kpool.Identity{Email: devUser, Admin: true}) // to read every owner's clusters
	var moves []devMove
	o := service.ListOptions{Limit: kpool.MaxLimit}
	for {
		page, err := svc.Clusters(all, o)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range page.Items {
			if from := m.from(c); from != "" {
				moves = append(moves, m.moveOne(ctx, svc, c, from))
			}
		}
		if o.After = page.Next; o.After == "" {
			break
		}
	}
	rec := &emulatorRecord{Emulators: map[kpool.PlatformType][]string{}}
	for t, o := range m.now {
		rec.Emulators[t] = []string{o}
	}
	for _, mv := range moves {
		if mv.Err != nil && !slices.Contains(rec.Emulators[mv.Platform], mv.From) {
			rec.Emulators[mv.Platform] = append(rec.Emulators[mv.Platform], mv.From) // tried again at the next run
		}
	}
	return moves, rec, nil
}

// moveOne points c, at from, at this run's emulator of its platform.
func (m *emulatorMover) moveOne(ctx context.Context, svc *service.Service, c *kpool.Cluster, from string) devMove {
	t := c.Spec.Platform.Type
	to := m.now[t]
	mv := devMove{ID: c.ID, Name: c.Name, Owner: c.CreatedBy, From: from, To: to, Platform: t}
	u, err := url.Parse(c.Spec.Endpoint)
	if err != nil {
		mv.Err = err
		return mv
	}
	nu, _ := url.Parse(to)
	u.Scheme, u.Host = nu.Scheme, nu.Host // the path, if any, stays
	patch, _ := json.Marshal(map[string]string{"endpoint": u.String()})
	octx := kpool.WithIdentity(ctx, &kpool.Identity{Email: c.CreatedBy})
	_, mv.Err = svc.UpdateCluster(octx, c.ID, service.Update{Patch: true, Spec: patch})
	return mv
}
