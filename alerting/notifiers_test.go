package alerting

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeliveryCopiesEveryField fills every field of Notifiers with a
// distinct value and expects the same JSON document from Delivery: a
// field added to one type and not copied fails here.
func TestDeliveryCopiesEveryField(t *testing.T) {
	var n Notifiers
	fill(reflect.ValueOf(&n).Elem(), new(int))
	want, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(n.Delivery())
	if err != nil {
		t.Fatal(err)
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(g, w); diff != "" {
		t.Errorf("Delivery() (-got, +want):\n%s", diff)
	}
}

// fill sets every field of v to a value derived from *seq.
func fill(v reflect.Value, seq *int) {
	*seq++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), seq)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+*seq%26)) + string(rune('a'+*seq/26)))
	case reflect.Int:
		v.SetInt(int64(*seq))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.ValueOf([]string{"x" + string(rune('a'+*seq%26))}))
	}
}
