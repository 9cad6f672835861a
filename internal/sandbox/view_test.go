package sandbox

import (
	"reflect"
	"testing"
)

// TestPlanView checks the steps of a command's view for the layouts that
// matter: the sessions' root of a non-root server, a root server's
// workspace under a parent its commands' uid cannot search (/root, a
// `mktemp -d`), a session's workspace there, and a needed directory below
// another with a second unsearchable directory between them.
func TestPlanView(t *testing.T) {
	blockedSet := func(dirs ...string) func(string) bool {
		return func(d string) bool {
			for _, b := range dirs {
				if d == b {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name            string
		needed, private []string
		blocked         func(string) bool
		bind            byte
		want            []viewOp
	}{
		{"nothing to hide or reach", []string{"/srv/ws", "/tmp/t"}, nil, blockedSet(), viewBindFD, nil},
		{"non-root server: sessions hidden, own workspace back",
			[]string{"/srv/ws.sessions/s1/workspace"}, []string{"/srv/ws.sessions"}, nil, viewBindPath,
			[]viewOp{{viewCoverIfExists, "/srv/ws.sessions"}, {viewBindPath, "/srv/ws.sessions/s1/workspace"}}},
		{"non-root server, workspace outside the sessions",
			[]string{"/srv/ws"}, []string{"/srv/ws.sessions"}, nil, viewBindPath,
			[]viewOp{{viewCoverIfExists, "/srv/ws.sessions"}}},
		{"root server, workspace under /root: the cover hides the sessions too",
			[]string{"/root/tn/workspace", "/tmp/t"}, []string{"/root/tn/workspace.sessions"}, blockedSet("/root"), viewBindFD,
			[]viewOp{{viewCover, "/root"}, {viewBindFD, "/root/tn/workspace"}}},
		{"root server, a session's workspace under /root",
			[]string{"/root/tn/workspace.sessions/s1/workspace"}, []string{"/root/tn/workspace.sessions"}, blockedSet("/root"), viewBindFD,
			[]viewOp{{viewCover, "/root"}, {viewBindFD, "/root/tn/workspace.sessions/s1/workspace"}}},
		{"root server, sessions reachable",
			[]string{"/srv/ws.sessions/s1/workspace", "/srv/ro"}, []string{"/srv/ws.sessions"}, blockedSet(), viewBindFD,
			[]viewOp{{viewCoverIfExists, "/srv/ws.sessions"}, {viewBindFD, "/srv/ws.sessions/s1/workspace"}}},
		{"an unsearchable directory inside a needed one",
			[]string{"/a/b/c/d", "/a/b"}, nil, blockedSet("/a", "/a/b/c"), viewBindFD,
			[]viewOp{{viewCover, "/a"}, {viewBindFD, "/a/b"}, {viewCover, "/a/b/c"}, {viewBindFD, "/a/b/c/d"}}},
		{"the sessions' root inside the workspace",
			[]string{"/w", "/w/.s/x/ws"}, []string{"/w/.s"}, blockedSet(), viewBindFD,
			[]viewOp{{viewCoverIfExists, "/w/.s"}, {viewBindFD, "/w/.s/x/ws"}}},
		{"a private directory is never put back",
			[]string{"/srv/s"}, []string{"/srv/s"}, blockedSet(), viewBindFD,
			[]viewOp{{viewCoverIfExists, "/srv/s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planView(tc.needed, tc.private, tc.blocked, tc.bind)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("planView =\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

// BenchmarkPlanView is the view's planning on the call path of a root
// server's command (each directory above the needed
// ones stat-ed once, then remembered): workspace, temp dir and two read paths, nothing private.
// Budget (BENCHMARKS.md): under 2% of BenchmarkStart/sandboxed.
func BenchmarkPlanView(b *testing.B) {
	s := &Sandbox{uid: DefaultCommandID, gid: DefaultCommandID, mapped: true}
	ws, tmp := b.TempDir(), b.TempDir()
	p := &Policy{Workspace: ws, TempDir: tmp, ReadPaths: []string{"/usr/local/lib", "/opt"}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if ops := planView(neededDirs(p), absDirs(p.Private), s.blockedFor, viewBindFD); len(ops) == 0 {
			b.Fatal("no view for a workspace under a 0700 parent")
		}
	}
}
