package testutil

import "time"

// Jump moves c on to its next timer whenever one is pending, until the
// returned function is called: waits on c then take no real time, and the
// time they cover is exact on the clock. Time never moves while no timer
// is pending.
func (c *FakeClock) Jump() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(100 * time.Microsecond):
			}
			if next, ok := c.Next(); ok {
				c.AdvanceTo(next)
			}
		}
	}()
	return func() { close(quit); <-done }
}
