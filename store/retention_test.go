package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/store"
	"netmon/store/storetest"
)

// createSeries creates a time-series table with an index on its ts column
// and inserts one row per timestamp.
func createSeries(t *testing.T, db *store.DB, table, col string, ts []int64) {
	t.Helper()
	ctx := t.Context()
	ddl := fmt.Sprintf(`CREATE TABLE %[1]s (%[2]s BIGINT NOT NULL, v INTEGER NOT NULL);
		CREATE INDEX %[1]s_%[2]s ON %[1]s (%[2]s)`, table, col)
	if _, err := db.Writer().ExecContext(ctx, ddl); err != nil {
		t.Fatalf("create %s: %v", table, err)
	}
	const chunk = 400 // 800 parameters per statement
	for start := 0; start < len(ts); start += chunk {
		part := ts[start:min(start+chunk, len(ts))]
		var values []string
		var args []any
		for i, v := range part {
			values = append(values, fmt.Sprintf("($%d, $%d)", 2*i+1, 2*i+2))
			args = append(args, v, i)
		}
		q := fmt.Sprintf("INSERT INTO %s (%s, v) VALUES %s", table, col, strings.Join(values, ", "))
		if _, err := db.Writer().ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("insert into %s: %v", table, err)
		}
	}
}

func countRows(t *testing.T, db *store.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Reader().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// timestamps returns n Unix timestamps counting down from age ago.
func timestamps(n int, age time.Duration) []int64 {
	from := time.Now().Add(-age).Unix()
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = from - int64(i)
	}
	return ts
}

// metricValues returns the value of every series of the named counter or
// gauge, keyed by its table label (or "" when it has none).
func metricValues(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			label := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" {
					label = l.GetValue()
				}
			}
			switch {
			case m.Counter != nil:
				values[label] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				values[label] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				values[label] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return values
}

func TestRetentionRunOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const keepHours = 168
		old := 8 * 24 * time.Hour
		createSeries(t, db, "samples", "ts", append(timestamps(12000, old), timestamps(10, 0)...))
		createSeries(t, db, "events", "at", append(timestamps(3, old), timestamps(5, time.Hour)...))

		reg := prometheus.NewRegistry()
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: keepHours, Interval: time.Hour}, db, reg)
		for _, tc := range [][2]string{{"samples", "ts"}, {"events", "at"}} {
			if err := r.Register(tc[0], tc[1]); err != nil {
				t.Fatalf("Register(%q, %q): %v", tc[0], tc[1], err)
			}
		}

		got, err := r.RunOnce(t.Context())
		if err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
		if diff := cmp.Diff(got, map[string]int64{"samples": 12000, "events": 3}); diff != "" {
			t.Errorf("first RunOnce deleted (-got, +want):\n%s", diff)
		}
		remaining := map[string]int64{"samples": countRows(t, db, "samples"), "events": countRows(t, db, "events")}
		if diff := cmp.Diff(remaining, map[string]int64{"samples": 10, "events": 5}); diff != "" {
			t.Errorf("rows left (-got, +want):\n%s", diff)
		}

		got, err = r.RunOnce(t.Context())
		if err != nil {
			t.Fatalf("second RunOnce: %v", err)
		}
		if diff := cmp.Diff(got, map[string]int64{"samples": 0, "events": 0}); diff != "" {
			t.Errorf("second RunOnce deleted (-got, +want):\n%s", diff)
		}

		metrics := map[string]map[string]float64{
			"deleted": metricValues(t, reg, "netmon_retention_deleted_rows_total"),
			"errors":  metricValues(t, reg, "netmon_retention_errors_total"),
			"runs":    metricValues(t, reg, "netmon_retention_run_duration_seconds"),
		}
		want := map[string]map[string]float64{
			"deleted": {"samples": 12000, "events": 3},
			"errors":  {"samples": 0, "events": 0},
			"runs":    {"": 2},
		}
		if diff := cmp.Diff(metrics, want); diff != "" {
			t.Errorf("metrics (-got, +want):\n%s", diff)
		}
		if last := metricValues(t, reg, "netmon_retention_last_run_timestamp_seconds")[""]; time.Since(time.Unix(int64(last), 0)) > time.Minute {
			t.Errorf("last run timestamp = %v, want about now", last)
		}
	})
}

// TestRetentionRegisterKeeping: a table registered with its own keep (the
// report rollups) loses only rows older than that, whatever the
// retention; the others follow the retention.
func TestRetentionRegisterKeeping(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createSeries(t, db, "rollup", "ts", append(timestamps(4, 200*24*time.Hour), timestamps(6, 30*24*time.Hour)...))
		createSeries(t, db, "samples", "ts", append(timestamps(4, 200*24*time.Hour), timestamps(6, 30*24*time.Hour)...))
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 168, Interval: time.Hour}, db, prometheus.NewRegistry())
		if err := r.RegisterKeeping("rollup", "ts", 190*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := r.Register("samples", "ts"); err != nil {
			t.Fatal(err)
		}
		got, err := r.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, map[string]int64{"rollup": 4, "samples": 10}); diff != "" {
			t.Errorf("deleted (-got, +want):\n%s", diff)
		}
		if n := countRows(t, db, "rollup"); n != 6 {
			t.Errorf("%d rollup rows left, want the 6 of 30 days ago", n)
		}
	})
}

func TestRetentionTableFailureIsolated(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createSeries(t, db, "samples", "ts", timestamps(7, 400*time.Hour))
		reg := prometheus.NewRegistry()
		r := store.NewRetention(storetest.Logger(t), store.DefaultRetentionConfig(), db, reg)
		for _, tc := range [][2]string{{"missing_table", "ts"}, {"samples", "ts"}} {
			if err := r.Register(tc[0], tc[1]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.RunOnce(t.Context())
		if err == nil || !strings.Contains(err.Error(), "missing_table") {
			t.Errorf("RunOnce error = %v, want one naming missing_table", err)
		}
		if diff := cmp.Diff(got, map[string]int64{"missing_table": 0, "samples": 7}); diff != "" {
			t.Errorf("RunOnce deleted (-got, +want):\n%s", diff)
		}
		if diff := cmp.Diff(metricValues(t, reg, "netmon_retention_errors_total"), map[string]float64{"missing_table": 1, "samples": 0}); diff != "" {
			t.Errorf("errors metric (-got, +want):\n%s", diff)
		}
	})
}

func TestRetentionRegister(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tests := []struct {
			desc    string
			table   string
			col     string
			wantErr bool
		}{
			{"valid", "flows_raw", "ts", false},
			{"leading underscore and digits", "_t2", "ts_1", false},
			{"reserved word is quoted", "order", "user", false},
			{"duplicate", "flows_raw", "ts", true},
			{"empty table", "", "ts", true},
			{"empty column", "t", "", true},
			{"upper case", "Flows", "ts", true},
			{"leading digit", "1flows", "ts", true},
			{"dash", "flows-raw", "ts", true},
			{"injection in table", "t; DROP TABLE settings", "ts", true},
			{"injection in column", "t", "ts) OR (1=1", true},
			{"quote", `t"`, "ts", true},
			{"schema qualified", "public.t", "ts", true},
			{"too long", strings.Repeat("a", 64), "ts", true},
		}
		r := store.NewRetention(storetest.Logger(t), store.DefaultRetentionConfig(), db, nil)
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				err := r.Register(tt.table, tt.col)
				if gotErr := err != nil; gotErr != tt.wantErr {
					t.Errorf("Register(%q, %q) = %v, want error: %v", tt.table, tt.col, err, tt.wantErr)
				}
			})
		}
	})
}

func TestRetentionLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("register after start refused", func(t *testing.T) {
			r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 1, Interval: time.Hour, Enabled: true}, db, nil)
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Stop() })
			if err := r.Register("late", "ts"); err == nil {
				t.Error("Register after Start succeeded, want an error")
			}
			if err := r.Start(); err == nil {
				t.Error("second Start succeeded, want an error")
			}
		})
		t.Run("disabled starts no loop", func(t *testing.T) {
			r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 1, Interval: time.Millisecond, Enabled: false}, db, nil)
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			if store.Running(r) {
				t.Error("loop running with Enabled=false")
			}
			if err := r.Register("late", "ts"); err == nil {
				t.Error("Register after Start succeeded, want an error")
			}
			if err := r.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
		t.Run("invalid config refused", func(t *testing.T) {
			r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 0, Interval: time.Hour, Enabled: true}, db, nil)
			if err := r.Start(); err == nil {
				_ = r.Stop()
				t.Error("Start with Hours=0 succeeded, want an error")
			}
		})
		t.Run("enabled loop purges", func(t *testing.T) {
			createSeries(t, db, "loop_samples", "ts", append(timestamps(20, 3*time.Hour), timestamps(2, 0)...))
			reg := prometheus.NewRegistry()
			r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 1, Interval: 20 * time.Millisecond, Enabled: true}, db, reg)
			if err := r.Register("loop_samples", "ts"); err != nil {
				t.Fatal(err)
			}
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Stop() })
			deadline := time.Now().Add(10 * time.Second)
			for countRows(t, db, "loop_samples") != 2 {
				if time.Now().After(deadline) {
					t.Fatal("background loop did not purge within 10s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			if store.Running(r) {
				t.Error("loop still running after Stop")
			}
		})
	})
}
