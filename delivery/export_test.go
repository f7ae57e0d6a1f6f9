package delivery

// LoopDone is closed when the dispatcher's loop has ended: from then on
// it claims no job. Stop ends the loop first, then waits for the attempts
// in flight.
func LoopDone(d *Dispatcher) <-chan struct{} { return d.loopDone }
