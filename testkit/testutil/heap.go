// Package testutil holds helpers the repository's tests share: heap
// measurements and a loopback farm of sites. It is imported by tests only
// (the root module's and redisfleet's) and is no part of the library's API:
// it changes with the tests, without notice.
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
