package boltstore

import (
	"os"
	"syscall"
	"unsafe"

	"go.etcd.io/bbolt"
)

// posixFadvDontNeed is POSIX_FADV_DONTNEED of Linux.
const posixFadvDontNeed = 4

// mapped returns the address and the length, rounded up to whole
// pages, of the part of s's memory map that holds the file.
func mapped(s *Store) (addr, length uintptr, err error) {
	var size int64
	err = s.db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		return nil
	})
	page := int64(os.Getpagesize())
	return s.db.Info().Data, uintptr((size + page - 1) / page * page), err
}

// EvictFile drops the file at path, which s has open, from the page
// cache, so that the next reads of s come from the disk, as after a
// restart of the machine: it unmaps the pages from s's memory map
// (MADV_DONTNEED: bbolt maps the file read-only, so this only drops
// the process's mappings) and then has the kernel drop them from the
// page cache (POSIX_FADV_DONTNEED, which skips pages still mapped).
// Unlike writing to /proc/sys/vm/drop_caches, it leaves the page cache
// of every other file alone and needs no privilege. (Exported for the
// package's external benchmarks.)
func EvictFile(s *Store, path string) error {
	addr, length, err := mapped(s)
	if err != nil {
		return err
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, length, syscall.MADV_DONTNEED); e != 0 {
		return e
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, posixFadvDontNeed, 0, 0); e != 0 {
		return e
	}
	return nil
}

// ResidentPages returns how many pages of the file s has open are in
// the page cache (mincore over its memory map).
func ResidentPages(s *Store) (int, error) {
	addr, length, err := mapped(s)
	if err != nil || length == 0 {
		return 0, err
	}
	vec := make([]byte, length/uintptr(os.Getpagesize()))
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, addr, length, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, e
	}
	n := 0
	for _, b := range vec {
		n += int(b & 1)
	}
	return n, nil
}
