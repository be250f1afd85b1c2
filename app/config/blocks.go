package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// block is one component's YAML block: every field of its Config that no
// row of the flat table binds (hubFlatBindings: the spec's flags and the
// useful few) is reachable as name.key, the key the field's Go name in
// snake case (a nested struct's fields prefixed with its name:
// auth.throttle_max_failures; a field tagged config:"nested" a block of
// its own: ai.nightly.enabled). The rows are made from the Config's type,
// so a field added to a component is reachable without a new row; a
// field of a type no setting can spell (a func, a client, a guard) gets
// no row, and TestEveryConfigFieldReachable fails until it moves to the
// component's Deps.
type block[C any] struct {
	// name is the YAML block (and the environment's NETMON_<NAME>__ prefix).
	name string
	// prefix is put before each key: two Configs sharing a block
	// (fleet's enrollment throttle: fleet.enroll_throttle_window).
	prefix string
	// field is the Go path of the Config in C (Auth).
	field string
	// ptr returns the address of the Config in c.
	ptr func(c *C) any
}

// blockBindings makes the rows of blocks for the fields flat does not
// bind, in the fields' order.
func blockBindings[C any](blocks []block[C], flat []binding[C], derived []string) []binding[C] {
	var def C
	bound := map[uintptr]bool{}
	for _, b := range flat {
		bound[reflect.ValueOf(b.ptr(&def)).Pointer()] = true
	}
	var out []binding[C]
	for _, blk := range blocks {
		var walk func(t reflect.Type, index []int, key, field string)
		walk = func(t reflect.Type, index []int, key, field string) {
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				idx := append(append([]int(nil), index...), i)
				k, fp := key+snake(f.Name), field+"."+f.Name
				leaf := reflect.ValueOf(blk.ptr(&def)).Elem().FieldByIndex(idx)
				if f.Type.Kind() == reflect.Struct && kindOf(f.Type) == nil {
					// A field tagged config:"nested" is a YAML block of its
					// own inside the component's (ai.nightly.enabled).
					sep := "_"
					if f.Tag.Get("config") == "nested" {
						sep = "."
					}
					walk(f.Type, idx, k+sep, fp)
					continue
				}
				kd := kindOf(f.Type)
				if kd == nil || bound[leaf.Addr().Pointer()] || slices.Contains(derived, fp) {
					continue
				}
				out = append(out, binding[C]{key: blk.name + "." + k, field: fp, kind: kd, block: true,
					ptr: func(c *C) any { return reflect.ValueOf(blk.ptr(c)).Elem().FieldByIndex(idx).Addr().Interface() }})
			}
		}
		walk(reflect.TypeOf(blk.ptr(&def)).Elem(), nil, blk.prefix, blk.field)
	}
	return out
}

// validateBlocks checks the keys of the components' blocks the one way
// that holds for every tunable: a count or a duration is not negative,
// and not zero where the component's default is not zero (a period of 0
// would stop a loop's ticker, a cap of 0 would refuse everything); where
// the default is 0, 0 keeps its meaning (off, unlimited, the OS's), and
// so it does for the fields of zeroOK, whose comment gives 0 a meaning.
func validateBlocks[C any](bs []binding[C], c, def *C, zeroOK []string) error {
	for _, b := range bs {
		if !b.block {
			continue
		}
		var v, d int64
		switch p := b.ptr(c).(type) {
		case *int:
			v, d = int64(*p), int64(*b.ptr(def).(*int))
		case *int64:
			v, d = *p, *b.ptr(def).(*int64)
		case *time.Duration:
			v, d = int64(*p), int64(*b.ptr(def).(*time.Duration))
		default:
			continue
		}
		if v < 0 || (v == 0 && d > 0 && !slices.Contains(zeroOK, b.field)) {
			return fmt.Errorf("%s %s: must be positive", b.key, b.kind.show(b.ptr(c)))
		}
	}
	return nil
}

// kindOf is how a setting spells a field of type t; nil: no setting can
// (a func, a pointer, an interface, a struct of several fields).
func kindOf(t reflect.Type) kind {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return duration{}
	case t == reflect.TypeOf([]string(nil)):
		return list{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return boolean{}
	case reflect.String:
		return str{}
	case reflect.Int:
		return integer{}
	case reflect.Int64, reflect.Uint64:
		return whole{}
	}
	return nil
}

// snake is a Go field name in snake case: SessionTTL -> session_ttl,
// BufferMB -> buffer_mb, CALife -> ca_life; NetFlow is one word (netflow).
func snake(name string) string {
	r := []rune(strings.ReplaceAll(name, "NetFlow", "Netflow"))
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (nextLower && unicode.IsUpper(r[i-1])) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// duration is a time.Duration set as Go spells it ("90s", "5m", "1h30m").
type duration struct{}

func (duration) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Duration(name, *def.(*time.Duration), usage)
}

func (duration) load(v *viper.Viper, key string, dst any) error {
	s, err := getString(v, key)
	if err != nil {
		return err
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%s: %q is not a duration (such as 30s, 5m or 1h)", origin(key), s)
	}
	*dst.(*time.Duration) = d
	return nil
}

func (duration) show(p any) string { return p.(*time.Duration).String() }

// whole is an int64 or uint64 field (byte counts, limits).
type whole struct{}

func (whole) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.String(name, whole{}.show(def), usage)
}

func (whole) load(v *viper.Viper, key string, dst any) error {
	n, err := getInt(v, key)
	if err != nil {
		return err
	}
	switch p := dst.(type) {
	case *int64:
		*p = int64(n)
	case *uint64:
		if n < 0 {
			return fmt.Errorf("%s: %d must not be negative", origin(key), n)
		}
		*p = uint64(n)
	}
	return nil
}

func (whole) show(p any) string {
	switch x := p.(type) {
	case *int64:
		return strconv.FormatInt(*x, 10)
	case *uint64:
		return strconv.FormatUint(*x, 10)
	}
	return ""
}
