package router

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// A binder fills an endpoint's input struct from the request. The input
// struct declares its parameters with tags, read once at start-up:
//
//	type historyIn struct {
//		Minutes int `query:"minutes" min:"1" max:"10080" default:"60" doc:"window length"`
//		ID      int64 `path:"id" doc:"agent id"`
//		Body    userCreate `body:"json"`
//	}
//
// The same tags produce the OpenAPI parameters and request body, so the
// validation a client meets is exactly the one the document describes.
// Supported parameter types: int, int64, float64, bool, string.
// Tags: min, max (numbers), default, enum (comma-separated strings), doc,
// required:"true".
type binder struct {
	params   []paramSpec
	bodyIdx  int // field index of the body, -1 when none
	bodyType reflect.Type
}

type paramSpec struct {
	name     string
	in       string // "query" or "path"
	idx      int
	kind     reflect.Kind
	min, max *float64
	def      string
	enum     []string
	doc      string
	required bool
}

// mustBinder reads t's tags. A malformed tag is a programming error caught
// by the first test that builds the router, so it panics.
func mustBinder(t reflect.Type) *binder {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("router: endpoint input %s must be a struct", t))
	}
	b := &binder{bodyIdx: -1}
	for i := range t.NumField() {
		f := t.Field(i)
		if _, ok := f.Tag.Lookup("body"); ok {
			if b.bodyIdx >= 0 {
				panic(fmt.Sprintf("router: %s has two body fields", t))
			}
			b.bodyIdx, b.bodyType = i, f.Type
			continue
		}
		p := paramSpec{idx: i, kind: f.Type.Kind(), doc: f.Tag.Get("doc"), def: f.Tag.Get("default")}
		switch {
		case f.Tag.Get("query") != "":
			p.name, p.in = f.Tag.Get("query"), "query"
		case f.Tag.Get("path") != "":
			p.name, p.in, p.required = f.Tag.Get("path"), "path", true
		default:
			panic(fmt.Sprintf("router: %s.%s has neither a query, path nor body tag", t, f.Name))
		}
		switch p.kind {
		case reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool, reflect.String:
		default:
			panic(fmt.Sprintf("router: %s.%s: unsupported parameter type %s", t, f.Name, f.Type))
		}
		p.min, p.max = mustFloatTag(f, "min"), mustFloatTag(f, "max")
		if e := f.Tag.Get("enum"); e != "" {
			p.enum = strings.Split(e, ",")
		}
		if f.Tag.Get("required") == "true" {
			p.required = true
		}
		if p.def != "" {
			// The default must itself pass validation.
			if _, err := p.parse(p.def); err != nil {
				panic(fmt.Sprintf("router: %s.%s: default %q: %v", t, f.Name, p.def, err))
			}
		}
		b.params = append(b.params, p)
	}
	return b
}

func mustFloatTag(f reflect.StructField, tag string) *float64 {
	s := f.Tag.Get(tag)
	if s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("router: field %s: tag %s=%q is not a number", f.Name, tag, s))
	}
	return &v
}

// bind fills v (the input struct) from c, or returns an Invalid error
// naming the parameter and what it accepts (or the body's error).
func (b *binder) bind(c *gin.Context, v reflect.Value) error {
	for i := range b.params {
		p := &b.params[i]
		var raw string
		if p.in == "path" {
			raw = c.Param(p.name)
		} else {
			raw = c.Query(p.name)
		}
		if raw == "" {
			if p.required {
				return invalidParam(p.in, p.name, " is required")
			}
			raw = p.def
			if raw == "" {
				continue
			}
		}
		val, err := p.parse(raw)
		if err != nil {
			return invalidParam(p.in, p.name, ": %v", err)
		}
		v.Field(p.idx).Set(val.Convert(v.Field(p.idx).Type()))
	}
	if b.bodyIdx >= 0 {
		return decodeBody(c, v.Field(b.bodyIdx))
	}
	return nil
}

// parse converts and validates one raw value.
func (p *paramSpec) parse(raw string) (reflect.Value, error) {
	switch p.kind {
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || !p.inRange(float64(n)) {
			return reflect.Value{}, fmt.Errorf("must be an integer%s", p.rangeText())
		}
		if p.kind == reflect.Int {
			return reflect.ValueOf(int(n)), nil
		}
		return reflect.ValueOf(n), nil
	case reflect.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !p.inRange(f) {
			return reflect.Value{}, fmt.Errorf("must be a number%s", p.rangeText())
		}
		return reflect.ValueOf(f), nil
	case reflect.Bool:
		bv, err := strconv.ParseBool(raw)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("must be true or false")
		}
		return reflect.ValueOf(bv), nil
	default: // string
		if len(p.enum) > 0 {
			for _, e := range p.enum {
				if raw == e {
					return reflect.ValueOf(raw), nil
				}
			}
			return reflect.Value{}, fmt.Errorf("must be one of %s", strings.Join(p.enum, ", "))
		}
		if len(raw) > 4096 {
			return reflect.Value{}, fmt.Errorf("must be at most 4096 bytes")
		}
		return reflect.ValueOf(raw), nil
	}
}

func (p *paramSpec) inRange(f float64) bool {
	return (p.min == nil || f >= *p.min) && (p.max == nil || f <= *p.max)
}

func (p *paramSpec) rangeText() string {
	g := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case p.min != nil && p.max != nil:
		return " between " + g(p.min) + " and " + g(p.max)
	case p.min != nil:
		return " of at least " + g(p.min)
	case p.max != nil:
		return " of at most " + g(p.max)
	}
	return ""
}
