package sandbox

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// sweepSession SIGKILLs every live process of session sid. A shell's jobs
// each have their own process group, so killing the shell's group is not
// enough; the session (the shell called setsid) holds them all, except
// those that started a session of their own.
func sweepSession(sid int) {
	for range 3 { // again, for processes forked while we were killing
		pids := sessionMembers(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

func sessionMembers(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(sid)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited meanwhile
		}
		// pid (comm) state ppid pgrp session ...; comm may contain spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 3 && f[3] == want && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sessionProcesses names the live processes of session sid but those in
// skip and bubblewrap's own, as "pid command line".
func sessionProcesses(sid int, skip ...int) []string {
	var out []string
	for _, pid := range sessionMembers(sid) {
		if slices.Contains(skip, pid) {
			continue
		}
		p := strconv.Itoa(pid)
		if comm, _ := os.ReadFile("/proc/" + p + "/comm"); strings.TrimSpace(string(comm)) == "bwrap" {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + p + "/cmdline")
		if err != nil || len(cmdline) == 0 {
			continue // exited meanwhile, or a kernel thread
		}
		line := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		if len(line) > 160 {
			line = line[:160] + "…"
		}
		out = append(out, p+" "+line)
	}
	return out
}
