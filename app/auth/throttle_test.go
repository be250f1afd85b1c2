package auth

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestThrottle() (*Throttle, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	th := NewThrottle(DefaultThrottleConfig(), "test", nil)
	th.now = clk.now
	return th, clk
}

func fail(th *Throttle, key string) bool {
	a, ok := th.Begin(key)
	if ok {
		a.Fail()
	}
	return ok
}

func TestThrottleBlocksAfterFiveFailuresForAMinute(t *testing.T) {
	th, clk := newTestThrottle()
	for i := range 5 {
		if !fail(th, "ip:1") {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	if _, ok := th.Begin("ip:1"); ok {
		t.Fatal("sixth attempt allowed")
	}
	if _, ok := th.Begin("ip:2"); !ok {
		t.Fatal("another key was blocked")
	}
	clk.add(59 * time.Second)
	if _, ok := th.Begin("ip:1"); ok {
		t.Fatal("allowed before the minute passed")
	}
	clk.add(time.Second)
	a, ok := th.Begin("ip:1")
	if !ok {
		t.Fatal("still blocked after a minute")
	}
	a.Cancel()
}

func TestThrottleWindowSlides(t *testing.T) {
	th, clk := newTestThrottle()
	for range 4 {
		fail(th, "k")
	}
	clk.add(61 * time.Second) // the four fall out of the window
	for i := range 4 {
		if !fail(th, "k") {
			t.Fatalf("attempt %d refused after the window", i+1)
		}
	}
	if a, ok := th.Begin("k"); !ok {
		t.Fatal("fifth attempt in the new window refused")
	} else {
		a.Fail()
	}
	if _, ok := th.Begin("k"); ok {
		t.Fatal("not blocked after five failures in the window")
	}
}

func TestThrottleSuccessResets(t *testing.T) {
	th, _ := newTestThrottle()
	for range 4 {
		fail(th, "k")
	}
	a, _ := th.Begin("k")
	a.Succeed()
	for i := range 5 {
		if !fail(th, "k") {
			t.Fatalf("attempt %d refused after a success reset", i+1)
		}
	}
	if th.Len() != 1 {
		t.Fatalf("tracking %d keys", th.Len())
	}
}

func TestThrottleConcurrentBurst(t *testing.T) {
	th, _ := newTestThrottle()
	var evaluated, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a, ok := th.Begin("ip:9")
			if !ok {
				refused.Add(1)
				return
			}
			evaluated.Add(1)
			time.Sleep(5 * time.Millisecond) // a password check
			a.Fail()
		}()
	}
	close(start)
	wg.Wait()
	if evaluated.Load() > 5 || evaluated.Load()+refused.Load() != 50 {
		t.Fatalf("evaluated %d, refused %d; want at most 5 evaluated", evaluated.Load(), refused.Load())
	}
}

func TestThrottleBoundsMemory(t *testing.T) {
	th, _ := newTestThrottle()
	th.cfg.MaxKeys = 100
	for i := range 100 {
		fail(th, string(rune('a'+i%26))+string(rune(i)))
	}
	if _, ok := th.Begin("one-too-many"); ok {
		t.Fatal("a new key was tracked beyond MaxKeys")
	}
	if th.Len() != 100 {
		t.Fatalf("len %d", th.Len())
	}
}

func TestThrottleMultipleKeys(t *testing.T) {
	th, _ := newTestThrottle()
	// A username attacked from five addresses is blocked as a username.
	for i := range 5 {
		a, ok := th.Begin("ip:"+string(rune('0'+i)), "user:alice")
		if !ok {
			t.Fatalf("attempt %d refused", i)
		}
		a.Fail()
	}
	if _, ok := th.Begin("ip:fresh", "user:alice"); ok {
		t.Fatal("username not blocked")
	}
	if a, ok := th.Begin("ip:fresh", "user:bob"); !ok {
		t.Fatal("fresh ip and user refused")
	} else {
		a.Cancel()
	}
}

// TestThrottleFailuresOnly: with FailuresOnly (enrollment) 50 parallel
// valid attempts from one address all pass, while five finished failures
// still block the address.
func TestThrottleFailuresOnly(t *testing.T) {
	cfg := DefaultThrottleConfig()
	cfg.FailuresOnly = true
	th := NewThrottle(cfg, "test", nil)
	var held []*Attempt
	for i := range 50 {
		a, ok := th.Begin("ip:1")
		if !ok {
			t.Fatalf("parallel attempt %d refused", i)
		}
		held = append(held, a)
	}
	for _, a := range held {
		a.Succeed()
	}
	for i := range 5 {
		a, ok := th.Begin("ip:1")
		if !ok {
			t.Fatalf("failure %d refused early", i)
		}
		a.Fail()
	}
	if _, ok := th.Begin("ip:1"); ok {
		t.Fatal("sixth attempt after five failures allowed")
	}
}

// TestThrottleAdmit: enrollment's view of the throttle — done(false)
// counts a failure, done(true) resets the key, and the sixth attempt
// after five failures is refused with no done.
func TestThrottleAdmit(t *testing.T) {
	th, _ := newTestThrottle()
	for i := range 4 {
		done, ok := th.Admit("ip:1")
		if !ok {
			t.Fatalf("attempt %d refused", i)
		}
		done(false)
	}
	done, ok := th.Admit("ip:1")
	if !ok {
		t.Fatal("fifth attempt refused")
	}
	done(true) // a success resets the four failures
	for i := range 5 {
		done, ok := th.Admit("ip:1")
		if !ok {
			t.Fatalf("failure %d after the reset refused", i)
		}
		done(false)
	}
	if done, ok := th.Admit("ip:1"); ok || done != nil {
		t.Errorf("Admit after five failures = %v, %v; want nil, false", done != nil, ok)
	}
}
