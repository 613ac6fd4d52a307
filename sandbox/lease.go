package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A lease tells other Zero processes that a [Docker] backend instance is
// alive. The Docker engine does not kill an exec's processes when the
// client that started it goes away, so after a crash (or kill -9) of Zero
// the commands it started would run on in the reused container forever.
// Each backend instance therefore tags every exec with ZERO_INSTANCE=<id>
// and holds an flock on a lease file named after the container and that
// id. The kernel drops the lock when the process dies, however it dies:
// a lease whose lock can be taken belongs to a dead instance, whose
// processes the next backend to attach to the container kills (see
// [Docker.reapDead]). A live instance's lock cannot be taken, so two Zero
// processes sharing a workspace never kill each other's commands.
//
// The file lists the users the instance's execs ran as, one a line: with
// all capabilities dropped, a process can only read the environment of,
// and kill, processes of its own user, so the reaper runs as each of them.
//
// Leases are local to this machine: a Zero on another host sharing a
// remote engine is not seen, and its processes are never touched.
type lease struct {
	f     *os.File // holds the lock; closing it releases the lease
	path  string
	users []string
}

const leaseSuffix = ".lease"

// leaseDir is the private directory of this user's leases,
// $TMPDIR/zero-leases-<uid>, created when missing. It refuses one it does
// not own or that others can enter: a lease there could be planted or
// removed.
func leaseDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "zero-leases-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || !privateToMe(fi) {
		return "", fmt.Errorf("%s is not a private directory of this user", dir)
	}
	return dir, nil
}

// acquireLease creates and locks the lease of instance on the container
// known as key. The file is locked under a temporary name and then renamed,
// so that nobody ever sees it unlocked and takes it for a dead one.
func acquireLease(dir, key, instance string) (*lease, error) {
	f, err := os.CreateTemp(dir, ".new-*")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, key+"."+instance+leaseSuffix)
	if err := lock(f); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		f.Close()
		return nil, err
	}
	return &lease{f: f, path: path}, nil
}

// addUser records that an exec runs as user, before it starts.
func (l *lease) addUser(user string) error {
	if slices.Contains(l.users, user) {
		return nil
	}
	l.users = append(l.users, user)
	_, err := l.f.WriteString(user + "\n")
	return err
}

// release gives the lease up: removed, when the instance's processes are
// known to be dead, else only unlocked, so that the next backend to
// attach kills them.
func (l *lease) release(remove bool) {
	if remove {
		os.Remove(l.path)
	}
	l.f.Close()
}

// deadLeases returns the leases on the container known as key whose owner
// is dead, each locked by the caller now, which must release them.
func deadLeases(dir, key string) []*lease {
	// key is "zero-<hex>@<hex>": nothing in it is special to Glob.
	paths, _ := filepath.Glob(filepath.Join(dir, key+".*"+leaseSuffix))
	var dead []*lease
	for _, path := range paths {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue // removed meanwhile
		}
		if lock(f) != nil {
			f.Close() // alive, or being reaped by someone else
			continue
		}
		l := &lease{f: f, path: path}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if u := strings.TrimSpace(sc.Text()); u != "" && !slices.Contains(l.users, u) {
				l.users = append(l.users, u)
			}
		}
		dead = append(dead, l)
	}
	return dead
}

// instanceOf returns the instance id in a lease's file name.
func (l *lease) instanceOf() string {
	name := strings.TrimSuffix(filepath.Base(l.path), leaseSuffix)
	return name[strings.LastIndexByte(name, '.')+1:]
}
