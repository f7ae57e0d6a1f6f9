package console_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// posixFadvDontNeed is POSIX_FADV_DONTNEED on Linux.
const posixFadvDontNeed = 4

// coldSupported reports whether evictFile can drop a file from memory
// here.
const coldSupported = true

// evictFile drops the file at path from the page cache while the process
// has it mapped (bbolt reads through a memory map): it finds the file's
// mappings in /proc/self/maps, drops their pages from the process
// (madvise MADV_DONTNEED on a shared read-only map discards nothing but
// the mapping's hold on the page), then asks the kernel to drop the
// file's cached pages (posix_fadvise POSIX_FADV_DONTNEED), so that the
// next read of each page comes from the disk. It returns how many bytes
// of mappings it found.
func evictFile(path string) (int64, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer maps.Close()
	var mapped int64
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// address perms offset dev inode pathname
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != abs {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			return 0, fmt.Errorf("/proc/self/maps: %q", sc.Text())
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("/proc/self/maps: %q", sc.Text())
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); e != 0 {
			return 0, e
		}
		mapped += int64(end - start)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, posixFadvDontNeed, 0, 0); e != 0 {
		return 0, e
	}
	return mapped, nil
}

// pageFaults returns the process's major page faults so far: reads of a
// mapped page that had to come from the disk.
func pageFaults() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return ru.Majflt, nil
}
