package main_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

// atkJobsEnv is an arr process running research jobs against the
// stand-in search and model, with a held model (jobs stay running at
// their writing step until the model is released or the job cancelled).
type atkJobsEnv struct {
	e     *env
	proc  *proc
	model *researchtest.LLM
}

func newAtkJobsEnv(t *testing.T) *atkJobsEnv {
	t.Helper()
	web := researchtest.NewWeb(t)
	sx := researchtest.NewSearXNG(t, web)
	model := researchtest.NewLLM(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_SEARCH=searxng", "SEARXNG_URL="+sx.URL, "ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(),
		"ARR_ANSWER_LLM_API_KEY=standin", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_MASTER_KEY="+testMasterKey, "ARR_WEBHOOK_PRIVATE=allow")
	proc := e.up()
	a := &atkJobsEnv{e: e, proc: proc, model: model}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("arr's log (tail):\n%s", tail(a.proc.logs.String(), 4000))
		}
	})
	return a
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// createJob POSTs a job and fails the test unless it is 202.
func (a *atkJobsEnv) createJob(t *testing.T, key, q string) researchJob {
	t.Helper()
	status, _, j := researchCall(t, "POST", a.e.answer, key, "", map[string]any{"q": q})
	if status != 202 {
		t.Fatalf("create %q: %d %+v", q, status, j.Error)
	}
	return j
}

// waitStatus polls GET until the job has status want (bounded).
func (a *atkJobsEnv) waitStatus(t *testing.T, key, id, want string, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		_, _, j := researchCall(t, "GET", a.e.answer, key, "/"+id, nil)
		if j.Status == want {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// TestAtkJobsOneAccountStarvesOthers: the worker runs at most 4 jobs at
// once, taken from every account's open jobs oldest first, with no cap
// per account and no deadline per job. One pro account queuing four slow
// (here: held) jobs occupies every slot; another account's job then stays
// queued for as long as the first account likes.
func TestAtkJobsOneAccountStarvesOthers(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("hog@example.com", "pro")
	a.e.createAccount("victim@example.com", "pro")
	hog, victim := a.e.mint("hog@example.com", "answer").Secret, a.e.mint("victim@example.com", "answer").Secret
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	var ids []string
	for i := range 6 {
		ids = append(ids, a.createJob(t, hog, fmt.Sprintf("What causes tide pattern number %d?", i)).ID)
	}
	for _, id := range ids[:4] {
		if !a.waitStatus(t, hog, id, "running", 60*time.Second) {
			t.Fatalf("the hog's job %s never started", id)
		}
	}
	v := a.createJob(t, victim, "Why is the sea salty?")
	if !a.waitStatus(t, victim, v.ID, "running", 30*time.Second) {
		_, _, j := researchCall(t, "GET", a.e.answer, victim, "/"+v.ID, nil)
		t.Fatalf("another account's job is still %s after 30s: one account's 6 open jobs hold every worker slot (no per-account share, no job deadline)", j.Status)
	}
}

// TestAtkJobsEventStreamsUnbounded: GET …/events is outside every limit
// (no daily count, no cap on concurrent streams) and each stream polls
// PostgreSQL twice every 200 ms for up to 15 minutes. One key opens as
// many as it likes on one job.
func TestAtkJobsEventStreamsUnbounded(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("pro@example.com", "pro")
	key := a.e.mint("pro@example.com", "answer").Secret
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	j := a.createJob(t, key, "What causes spring tides?")
	const n = 60
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 20 * time.Second}
	stop := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, a.e.answer+"/api/v1/research/"+j.ID+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				mu.Lock()
				codes[0]++
				mu.Unlock()
				return
			}
			defer resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
			if resp.StatusCode == 200 {
				// Hold the stream open until the test has counted.
				sc := bufio.NewScanner(resp.Body)
				done := make(chan struct{})
				go func() {
					for sc.Scan() {
					}
					close(done)
				}()
				select {
				case <-stop:
				case <-done:
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		got := 0
		for _, c := range codes {
			got += c
		}
		mu.Unlock()
		if got == n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop) // each client closes its stream
	wg.Wait()
	if codes[200] == n {
		t.Fatalf("one key held %d concurrent event streams on one job, all admitted (%v): no per-key cap on streams", n, codes)
	}
}

// TestAtkJobsRevokedKeyKeepsStreaming: an events stream checks the key
// once, when it opens; a key revoked meanwhile keeps receiving the job's
// events, its answer included (the done event carries the whole answer),
// for up to 15 minutes.
func TestAtkJobsRevokedKeyKeepsStreaming(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("pro@example.com", "pro")
	k := a.e.mint("pro@example.com", "answer")
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	j := a.createJob(t, k.Secret, "What causes spring tides?")

	type result struct {
		evs []jobEvent
	}
	writing := make(chan struct{})
	out := make(chan result, 1)
	go func() {
		var once sync.Once
		evs := jobEvents(t, a.e.answer, k.Secret, j.ID, "", func(ev jobEvent) bool {
			if ev.event == "writing" {
				once.Do(func() { close(writing) })
			}
			return ev.event == "done"
		})
		out <- result{evs}
	}()
	select {
	case <-writing:
	case <-time.After(60 * time.Second):
		t.Fatal("the job never reached writing")
	}
	a.e.mustArr(nil, "keys", "revoke", "--id", k.ID, "--json")
	eventually(t, 30*time.Second, "the revoked key refused", func() bool {
		status, _, _ := researchCall(t, "GET", a.e.answer, k.Secret, "/"+j.ID, nil)
		return status == 401
	})
	a.model.SetHold(false)
	a.model.Release()
	var r result
	select {
	case r = <-out:
	case <-time.After(90 * time.Second):
		t.Fatal("the stream did not end")
	}
	var after []string
	seen := false
	for _, ev := range r.evs {
		if seen {
			after = append(after, ev.event)
		}
		if ev.event == "writing" {
			seen = true
		}
	}
	for _, name := range after {
		if name == "succeeded" || name == "done" {
			t.Fatalf("a revoked key's open stream went on to receive %s (the answer): events after the revoke: %s", name, strings.Join(after, ","))
		}
	}
}

// TestAtkJobsCrashLoopNeverGivesUp: a job left running by a process that
// died is rerun from the start by the next one, with no bound on the
// attempts. A job that kills its process (here: the process is killed
// at the same step each time) is claimed again at every start, forever:
// the service crash-loops and the model is paid for every attempt.
func TestAtkJobsCrashLoopNeverGivesUp(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("pro@example.com", "pro")
	key := a.e.mint("pro@example.com", "answer").Secret
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	j := a.createJob(t, key, "What causes spring tides?")
	const kills = 4
	for i := range kills {
		eventually(t, 60*time.Second, fmt.Sprintf("attempt %d running", i+1), func() bool {
			_, _, got := researchCall(t, "GET", a.e.answer, key, "/"+j.ID, nil)
			return got.Status == "running" && got.Attempts == i+1
		})
		a.proc.kill()
		a.proc = a.e.up()
	}
	_, _, got := researchCall(t, "GET", a.e.answer, key, "/"+j.ID, nil)
	eventually(t, 30*time.Second, "the job to be claimed again or given up", func() bool {
		_, _, got = researchCall(t, "GET", a.e.answer, key, "/"+j.ID, nil)
		return got.Status == "failed" || got.Attempts > kills
	})
	if got.Status != "failed" {
		t.Fatalf("after %d processes died running it the job is %s at attempt %d: it is rerun without bound", kills, got.Status, got.Attempts)
	}
}

// TestAtkJobsRevokedKeysQueuedJobStillRuns: a job is authorized once, at
// POST; the worker runs it whenever it gets to it, without asking whether
// its key still stands. A key revoked (leaked, say) while its jobs wait
// has them researched anyway and served (an AnswerServed for the revoked
// key).
func TestAtkJobsRevokedKeysQueuedJobStillRuns(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("busy@example.com", "pro")
	a.e.createAccount("pro@example.com", "pro")
	busy := a.e.mint("busy@example.com", "answer").Secret
	k := a.e.mint("pro@example.com", "answer")
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	var ids []string
	for i := range 4 { // every worker slot
		ids = append(ids, a.createJob(t, busy, fmt.Sprintf("What causes tide pattern number %d?", i)).ID)
	}
	for _, id := range ids {
		if !a.waitStatus(t, busy, id, "running", 60*time.Second) {
			t.Fatalf("job %s never started", id)
		}
	}
	j := a.createJob(t, k.Secret, "Why is the sea salty?")
	a.e.mustArr(nil, "keys", "revoke", "--id", k.ID, "--json")
	eventually(t, 30*time.Second, "the revoked key refused", func() bool {
		status, _, _ := researchCall(t, "GET", a.e.answer, k.Secret, "/"+j.ID, nil)
		return status == 401
	})
	a.model.SetHold(false)
	a.model.Release()
	pool, _ := openStore(t, a.e.dbURL)
	var status string
	eventually(t, 60*time.Second, "the revoked key's job to end", func() bool {
		if err := pool.QueryRow(t.Context(), `SELECT status FROM rm_research_jobs.jobs WHERE job_id = $1`, j.ID).Scan(&status); err != nil {
			t.Fatal(err)
		}
		return status != "queued" && status != "running"
	})
	if status == "succeeded" {
		t.Fatalf("a job whose key was revoked while it waited was researched and served anyway (status %s)", status)
	}
}

// TestAtkJobsRebuildCutsOpenStreams: an events stream that reads its job
// as missing ends silently (no done, no error event); a rebuild of the
// research_jobs read model under an open stream must not make it so.
// (Held when written: the rebuild is not seen half-done by readers.)
func TestAtkJobsRebuildCutsOpenStreams(t *testing.T) {
	a := newAtkJobsEnv(t)
	a.e.createAccount("pro@example.com", "pro")
	key := a.e.mint("pro@example.com", "answer").Secret
	a.model.SetHold(true)
	defer a.model.SetHold(false)
	j := a.createJob(t, key, "What causes spring tides?")
	writing := make(chan struct{})
	out := make(chan []jobEvent, 1)
	go func() {
		var once sync.Once
		out <- jobEvents(t, a.e.answer, key, j.ID, "", func(ev jobEvent) bool {
			if ev.event == "writing" {
				once.Do(func() { close(writing) })
			}
			return ev.event == "done"
		})
	}()
	select {
	case <-writing:
	case <-time.After(60 * time.Second):
		t.Fatal("the job never reached writing")
	}
	for range 3 {
		if _, stderr, code := a.e.arr("projections", "rebuild", "research_jobs"); code != 0 {
			t.Fatalf("rebuild: %d %s", code, stderr)
		}
	}
	a.model.SetHold(false)
	a.model.Release()
	var evs []jobEvent
	select {
	case evs = <-out:
	case <-time.After(90 * time.Second):
		t.Fatal("the stream did not end")
	}
	if evs[len(evs)-1].event != "done" {
		t.Fatalf("the stream ended without done across a rebuild: %s", eventNames(evs))
	}
}
