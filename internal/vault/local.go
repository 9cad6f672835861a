package vault

import (
	"context"
	"sync"
	"time"
)

// local is what the in-process backends (memory, directory) share: locks
// and the change feed, both within this process only, which is all a
// store that one process owns needs.
type local struct {
	lmu   sync.Mutex
	locks map[string]localLock

	wmu      sync.Mutex
	watchers map[int]func(string)
	next     int
}

type localLock struct {
	token   uint64
	expires time.Time
}

var lockTokens struct {
	sync.Mutex
	n uint64
}

func (l *local) Lock(_ context.Context, name string, ttl time.Duration) (func(), error) {
	lockTokens.Lock()
	lockTokens.n++
	token := lockTokens.n
	lockTokens.Unlock()
	now := time.Now()
	l.lmu.Lock()
	defer l.lmu.Unlock()
	if held, ok := l.locks[name]; ok && now.Before(held.expires) {
		return nil, ErrLocked
	}
	if l.locks == nil {
		l.locks = map[string]localLock{}
	}
	l.locks[name] = localLock{token: token, expires: now.Add(ttl)}
	return func() {
		l.lmu.Lock()
		defer l.lmu.Unlock()
		if l.locks[name].token == token {
			delete(l.locks, name)
		}
	}, nil
}

func (l *local) Watch(fn func(string)) func() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.watchers == nil {
		l.watchers = map[int]func(string){}
	}
	id := l.next
	l.next++
	l.watchers[id] = fn
	return func() {
		l.wmu.Lock()
		defer l.wmu.Unlock()
		delete(l.watchers, id)
	}
}

// changed tells the watchers about key.
func (l *local) changed(key string) {
	l.wmu.Lock()
	fns := make([]func(string), 0, len(l.watchers))
	for _, fn := range l.watchers {
		fns = append(fns, fn)
	}
	l.wmu.Unlock()
	for _, fn := range fns {
		fn(key)
	}
}
