package intake

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"netmon/agentmode/wire"
	"netmon/app/errs"
)

func readConns(raw string) (Conns, error) {
	var c Conns
	err := jsonv2.Unmarshal([]byte(raw), &c, jsontext.AllowInvalidUTF8(true))
	return c, err
}

func TestConns(t *testing.T) {
	long := strings.Repeat("p", 300)
	tests := []struct {
		desc, in string
		wantDoc  string
		wantN    int
		wantErr  string
	}{
		{desc: "well-formed is kept byte for byte",
			in:      `[{"proto":"tcp","local_addr":"10.0.0.1:5","remote_addr":"1.2.3.4:443","status":"ESTABLISHED","pid":7,"process":"curl"}]`,
			wantDoc: `[{"proto":"tcp","local_addr":"10.0.0.1:5","remote_addr":"1.2.3.4:443","status":"ESTABLISHED","pid":7,"process":"curl"}]`, wantN: 1},
		{desc: "whitespace compacted", in: "[ {\"proto\" : \"udp\" ,\n \"pid\": -1} ]", wantDoc: `[{"proto":"udp","pid":-1}]`, wantN: 1},
		{desc: "escapes kept", in: `[{"process":"\u003cscript\u003e"}]`, wantDoc: `[{"process":"\u003cscript\u003e"}]`, wantN: 1},
		{desc: "empty", in: `[]`, wantDoc: `[]`, wantN: 0},
		{desc: "null is empty", in: `null`, wantDoc: `[]`, wantN: 0},
		{desc: "unknown name dropped", in: `[{"proto":"tcp","secret":"x"}]`,
			wantDoc: `[{"proto":"tcp","local_addr":"","remote_addr":"","status":"","pid":0,"process":""}]`, wantN: 1},
		{desc: "long process name clipped", in: `[{"process":"` + long + `"}]`,
			wantDoc: `[{"proto":"","local_addr":"","remote_addr":"","status":"","pid":0,"process":"` + long[:maxTextField] + `"}]`, wantN: 1},
		{desc: "invalid UTF-8 replaced", in: "[{\"process\":\"a\xffb\"}]",
			wantDoc: `[{"proto":"","local_addr":"","remote_addr":"","status":"","pid":0,"process":"a` + "\uFFFD" + `b"}]`, wantN: 1},
		{desc: "case-insensitive name", in: `[{"PROTO":"tcp"}]`,
			wantDoc: `[{"proto":"tcp","local_addr":"","remote_addr":"","status":"","pid":0,"process":""}]`, wantN: 1},
		{desc: "null element", in: `[null]`, wantDoc: `[{"proto":"","local_addr":"","remote_addr":"","status":"","pid":0,"process":""}]`, wantN: 1},
		{desc: "pid out of int32 range", in: `[{"pid":4294967296}]`, wantErr: "unmarshal JSON number 4294967296 into Go int32 within \"/0/pid\""},
		{desc: "pid not a number", in: `[{"pid":"7"}]`, wantErr: "unmarshal JSON string into Go int32"},
		{desc: "not an array", in: `{"proto":"tcp"}`, wantErr: "unmarshal JSON object into Go []wire.Connection"},
		{desc: "element not an object", in: `[1]`, wantErr: "unmarshal JSON number into Go wire.Connection within \"/0\""},
		{desc: "name twice", in: `[{"proto":"tcp","proto":"udp"}]`, wantErr: "duplicate object member name"},
	}
	// json/v2 words its errors "cannot" or "unable to" at random, so that
	// nobody depends on the text: the wanted errors leave the verb out.
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c, err := readConns(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(c.JSON()) != tt.wantDoc || c.Len() != tt.wantN {
				t.Errorf("got %d %s\nwant %d %s", c.Len(), c.JSON(), tt.wantN, tt.wantDoc)
			}
			// Whatever came in, the document reads back as connections.
			var back []wire.Connection
			if err := jsonv2.Unmarshal(c.JSON(), &back); err != nil || len(back) != tt.wantN {
				t.Errorf("stored document does not read back: %v (%d items)", err, len(back))
			}
		})
	}
}

func TestConnsLimit(t *testing.T) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range maxConnections + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"pid":%d}`, i)
	}
	b.WriteByte(']')
	_, err := readConns(b.String())
	if errs.KindOf(err) != errs.TooLarge {
		t.Fatalf("error = %v, want a 413", err)
	}
}

func BenchmarkConns(b *testing.B) {
	conns := make([]wire.Connection, 50)
	for i := range conns {
		conns[i] = wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.1.2.3:%d", 40000+i), RemoteAddr: fmt.Sprintf("198.51.100.%d:443", i),
			Status: "ESTABLISHED", PID: int32(1000 + i), Process: "firefox-esr"}
	}
	raw, _ := jsonv2.Marshal(conns)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var c Conns
		if err := jsonv2.Unmarshal(raw, &c); err != nil || c.Len() != 50 {
			b.Fatal(err)
		}
	}
}

// FuzzConns: whatever an agent sends, an accepted inventory is stored as a
// list of connections that strict decoding reads back, with every text
// field within its bound, and the count matches.
func FuzzConns(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `[{"proto":"tcp","pid":1}]`, `[{"process":"\ud800"}]`, "[{\"status\":\"\xff\"}]",
		`[{"local_addr":"a\"b","remote_addr":"\\"}]`, `[{"pid":-2147483648},{"pid":2147483647}]`, `[{"proto":"x"},]`, `[{}]`, ` [ { } , { } ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c Conns
		if err := jsonv2.Unmarshal(raw, &c, jsontext.AllowInvalidUTF8(true)); err != nil {
			return
		}
		var back []wire.Connection
		if err := jsonv2.Unmarshal(c.JSON(), &back); err != nil {
			t.Fatalf("stored %s does not read back strictly: %v", c.JSON(), err)
		}
		if len(back) != c.Len() {
			t.Fatalf("count %d, document has %d", c.Len(), len(back))
		}
		for _, b := range back {
			if len(b.Proto) > 16 || len(b.LocalAddr) > 64 || len(b.RemoteAddr) > 64 || len(b.Status) > 32 || len(b.Process) > maxTextField {
				t.Fatalf("field over its bound in %s", c.JSON())
			}
		}
	})
}

// TestBatchErrorPointer: an error inside the inventory names its place in
// the whole body, for the API's "field ... must be" message.
func TestBatchErrorPointer(t *testing.T) {
	var b Batch
	err := jsonv2.Unmarshal([]byte(`{"ts":1,"connections":[{"pid":1},{"pid":"x"}]}`), &b)
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || se.JSONPointer != "/connections/1/pid" {
		t.Fatalf("error %v, want one at /connections/1/pid", err)
	}
}
