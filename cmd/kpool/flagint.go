package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// boundedInt is an int flag refused out of its range as it is read, so
// that an explicit 0 is never taken for the default, and a variable out of
// range gets the flag's reason (applyEnv).
type boundedInt struct {
	p      *int
	lo, hi int
	also   string // what else to say of the range, if anything
}

// intFlag registers a bounded int flag with its default.
func intFlag(fs *pflag.FlagSet, p *int, name string, def, lo, hi int, also, usage string) {
	*p = def
	fs.Var(boundedInt{p: p, lo: lo, hi: hi, also: also}, name, usage)
}

// reason says what the flag takes.
func (b boundedInt) reason() string {
	return fmt.Sprintf("give %d to %d%s", b.lo, b.hi, b.also)
}

func (b boundedInt) String() string {
	if b.p == nil {
		return "0"
	}
	return strconv.Itoa(*b.p)
}

func (b boundedInt) Type() string { return "int" }

func (b boundedInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < b.lo || v > b.hi {
		return fmt.Errorf("%s", b.reason())
	}
	*b.p = v
	return nil
}
