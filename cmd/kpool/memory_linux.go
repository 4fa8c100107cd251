package main

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// exeMapping is one mapping of this process's own executable file, read
// from /proc/self/smaps: its address range, whether it is writable, and
// how much of it is resident.
type exeMapping struct {
	start, end uintptr
	writable   bool
	rss        int64
}

// releaseExecutable tells the kernel that the pages of kpool's executable
// this process touched so far are no longer needed, and returns how many
// bytes of it stopped being resident. Only the read-only mappings (code,
// types, function tables) are released: their pages are the file's, and a
// page still in use faults back from it on its next touch. MADV_PAGEOUT
// reclaims them from the page cache where the kernel allows (the process
// may write the file, and no other process maps the page); MADV_DONTNEED
// then unmaps the rest from this process, leaving them to the page cache.
func releaseExecutable() (int64, error) {
	before, err := exeMappings()
	if err != nil {
		return 0, err
	}
	for _, m := range before {
		if m.writable || m.rss == 0 {
			continue
		}
		// Before Linux 5.4 there is no MADV_PAGEOUT: DONTNEED alone.
		if err := madvise(m, unix.MADV_PAGEOUT); err != nil && !errors.Is(err, unix.EINVAL) {
			return 0, err
		}
		if err := madvise(m, unix.MADV_DONTNEED); err != nil {
			return 0, err
		}
	}
	after, err := exeMappings()
	if err != nil {
		return 0, err
	}
	return resident(before) - resident(after), nil
}

// madvise gives the kernel advice about m's whole range.
func madvise(m exeMapping, advice uintptr) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, advice); e != 0 {
		return e
	}
	return nil
}

// resident sums the resident bytes of ms.
func resident(ms []exeMapping) int64 {
	var n int64
	for _, m := range ms {
		n += m.rss
	}
	return n
}

// exeMappings lists the mappings of /proc/self/exe with their Rss.
func exeMappings() ([]exeMapping, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	var out []exeMapping
	cur := -1
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			cur = -1
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if ok && err1 == nil && err2 == nil && len(f) >= 6 && strings.HasSuffix(line, " "+exe) {
				out = append(out, exeMapping{start: uintptr(start), end: uintptr(end), writable: f[1][1] == 'w'})
				cur = len(out) - 1
			}
			continue
		}
		if cur >= 0 && f[0] == "Rss:" && len(f) >= 2 {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			out[cur].rss = kb << 10
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no mapping of " + exe + " in /proc/self/smaps")
	}
	return out, nil
}
