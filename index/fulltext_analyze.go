package index

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/praxis-os/continuity/analyze"
)

// ftExchange is an exchange's texts on their way into the full-text index:
// as stored, then in their index form (analyze.Document).
type ftExchange struct {
	row      int64
	user, ai string
}

// analyzeChunk is how many exchanges an analysing goroutine takes at a
// time: enough to make the hand-over cheap, few enough that the writer
// can start inserting almost at once.
const analyzeChunk = 32

// exchangeAnalysis analyses a step's exchanges on several goroutines (one
// per core) while the full-text writer, which must insert them one at a
// time and in order, consumes them: chunk k is ready when ready[k] is
// closed. The goroutines take chunks in increasing order, so the writer
// rarely waits for more than the chunk at hand.
type exchangeAnalysis struct {
	ready   []chan struct{}
	next    atomic.Int64 // next chunk to take
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// analyzeExchanges starts analysing the texts of todo in place: each
// becomes its index form (analyze.Document).
func analyzeExchanges(todo []ftExchange) *exchangeAnalysis {
	chunks := (len(todo) + analyzeChunk - 1) / analyzeChunk
	a := &exchangeAnalysis{ready: make([]chan struct{}, chunks)}
	for k := range a.ready {
		a.ready[k] = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), chunks)
	a.wg.Add(workers)
	for range workers {
		go func() {
			defer a.wg.Done()
			an := new(analyze.Analyzer) // its cache of stems lasts the step
			for !a.stopped.Load() {
				k := int(a.next.Add(1) - 1)
				if k >= chunks {
					return
				}
				for i := k * analyzeChunk; i < min((k+1)*analyzeChunk, len(todo)); i++ {
					e := &todo[i]
					e.user, e.ai = an.Document(e.user), an.Document(e.ai)
				}
				close(a.ready[k])
			}
		}()
	}
	return a
}

// wait returns when ftExchange i is analysed. Not to be called after stop.
func (a *exchangeAnalysis) wait(i int) {
	<-a.ready[i/analyzeChunk]
}

// stop makes the goroutines end after the chunk at hand, and waits for
// them: after stop, nothing touches the exchanges any more.
func (a *exchangeAnalysis) stop() {
	a.stopped.Store(true)
	a.wg.Wait()
}
