// Package testutil holds helpers the module's tests share: heap
// measurements and a loopback farm of sites. It is imported by tests only.
package testutil

import "runtime"

// HeapInUse returns the live heap after a collection.
func HeapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Retained returns the heap that what make returns holds on its own.
func Retained(make func() any) int64 {
	before := HeapInUse()
	v := make()
	after := HeapInUse()
	runtime.KeepAlive(v)
	return int64(after) - int64(before)
}
