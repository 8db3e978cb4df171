package index

import "runtime"

// prepWorkersMin is the smallest batch prepared on two workers: parsing,
// redacting and packing a long line costs about as much as storing it,
// so one worker alone held the commit back on long lines (LongMemEval's
// 2 KB); a second one runs on another core while the commit and the
// full-text writer wait on SQLite.
const prepWorkersMin = 256

// startWorkers prepares lines 0..n-1 with prepare on one or two
// goroutines, worker w taking lines w, w+W, ..., each in order, so that
// line(i) waits for worker i%W alone.
func (p *linePrep) startWorkers(n int, prepare func(i int)) {
	workers := 1
	if n >= prepWorkersMin && runtime.GOMAXPROCS(0) >= 2 {
		workers = 2
	}
	p.done = make([]chan int, workers)
	p.nextOf = make([]int, workers)
	p.quit = make(chan struct{})
	for w := range workers {
		p.done[w] = make(chan int, n/workers+1)
		p.nextOf[w] = w
		p.wg.Add(1)
		go func(done chan<- int) {
			defer p.wg.Done()
			defer close(done)
			for i := w; i < n; i += workers {
				select {
				case <-p.quit:
					return
				default:
				}
				prepare(i)
				done <- i
			}
		}(p.done[w])
	}
}
