package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLaneOrder: when the holder releases, waiting priority writers go
// first (in arrival order), then ingest writers; an ingest writer never
// overtakes a waiting priority writer.
func TestLaneOrder(t *testing.T) {
	var l lane
	ctx := context.Background()
	if err := l.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	start := func(name string, priority bool) {
		before := queued(&l, priority)
		go func() {
			if err := l.acquire(ctx, priority); err != nil {
				t.Error(err)
				return
			}
			got <- name
			l.release()
		}()
		// Let it queue before the next one arrives.
		deadline := time.Now().Add(time.Second)
		for queued(&l, priority) == before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	start("ingest-1", false)
	start("person-1", true)
	start("ingest-2", false)
	start("person-2", true)
	if !l.priorityWaiting() {
		t.Fatal("priorityWaiting = false with two priority writers queued")
	}
	l.release()
	var order []string
	for range 4 {
		order = append(order, <-got)
	}
	want := []string{"person-1", "person-2", "ingest-1", "ingest-2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if l.held || l.priorityWaiting() {
		t.Error("lane still held after everyone released")
	}
}

// queued is how many writers of that kind wait.
func queued(l *lane, priority bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if priority {
		return len(l.high)
	}
	return len(l.low)
}

// TestLaneCancel: a waiter that gives up leaves the queue and the lane
// goes on to the next.
func TestLaneCancel(t *testing.T) {
	var l lane
	if err := l.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.acquire(ctx, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire = %v, want the deadline", err)
	}
	if l.priorityWaiting() {
		t.Error("the cancelled waiter is still queued")
	}
	l.release()
	if err := l.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	l.release()
}

// TestLaneRulesLevel: the alert engine's writes wait behind people's and
// go before ingest, whatever the arrival order (RELIABILITY case 35: a
// storm's inserts never hold a silence or a configuration change).
func TestLaneRulesLevel(t *testing.T) {
	var l lane
	ctx := context.Background()
	if err := l.acquireAt(ctx, levelRules); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	waiting := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.high) + len(l.mid) + len(l.low)
	}
	start := func(name string, level int) {
		before := waiting()
		go func() {
			if err := l.acquireAt(ctx, level); err != nil {
				t.Error(err)
				return
			}
			got <- name
			l.release()
		}()
		deadline := time.Now().Add(time.Second)
		for waiting() == before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	start("ingest", levelIngest)
	start("rules-1", levelRules)
	start("rules-2", levelRules)
	start("person", levelPeople)
	l.release()
	var order []string
	for range 4 {
		order = append(order, <-got)
	}
	want := []string{"person", "rules-1", "rules-2", "ingest"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}
